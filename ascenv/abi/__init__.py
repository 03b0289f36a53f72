"""What the dynamic loader would do with a set of libraries, modelled from their bytes.

``tree`` reads ELF files under a root (the only I/O here), ``loader`` models ld.so's search for
each DT_NEEDED, ``symbols`` binds undefined symbols against the load order. Nothing is loaded or
executed, so an aarch64 image reads the same from an x86_64 machine.
"""
