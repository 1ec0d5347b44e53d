"""``idlgen lsp``: a Language Server Protocol server for HDI ``.idl`` and FlatBuffers ``.fbs``.

``workspace`` is the editor-independent part: files on disk plus open buffers (an overlay the
front end reads instead of the disk), analyses cached per file and invalidated by what they
loaded, names resolved to declarations. ``features`` turns those into hover text (with the wire
facts), definitions, references, symbols and completions; ``server`` speaks LSP through pygls
(the ``[lsp]`` extra); ``cli`` adds the subcommand (argparse only: no pygls until it runs).
"""
