"""Developer tools that ship with idlgen but are not part of the runtime or the compiler.

``onnx_conformance`` runs ONNX's backend node tests through the NNRt kernels (it needs the
``onnx`` package); ``python -m idlgen.runtime.conformance`` is its command-line entry point.
"""
