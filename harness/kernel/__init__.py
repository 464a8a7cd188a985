"""The kernel stage: from a source and a recipe to built artifacts.

Takes a version (Debian's linux-source-X.Y) or a user's checkout, a
quilt-style series, kconfig fragments and a debug profile; gives
``kbuild.BuildResult``: the artifacts (bzImage, modules, config,
vmlinux) of a variant cached by content under the cache folder.

Open first: ``kbuild`` (variants, their keys, ``build()``).  Then
``series`` (quilt series), ``fragments`` and ``profiles`` (what the
config holds), ``checkout`` and ``mirror`` (a user's git tree),
``cache`` (listing and pruning), ``ccachestats``, and for reading the
result back ``recompile`` and ``symbolize`` (file:line of a frame,
objects rebuilt with -g).

Imports only the shared leaves (errors, paths, proc, jsonout, progress).
"""
