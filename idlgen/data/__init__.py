"""Data tools over a schema compiled in memory: ``idlgen convert`` and ``idlgen annotate``.

``schema`` compiles a schema file (front end → IR → the runtime descriptors and codecs the
generated packages use), ``convert`` turns FlatBuffers JSON into ``flatc -b`` bytes and back
and HDI JSON into MessageParcel bytes and back, ``fb_regions`` / ``parcel_regions`` label every
byte of a buffer in ``regions``, ``annotate`` picks the walker and renders text or JSON,
``inmemory`` imports a generated package tree without writing it, ``cli`` holds the two
subcommands.
"""
