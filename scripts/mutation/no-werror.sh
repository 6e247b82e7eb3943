#!/bin/sh
# no-werror.sh -- CMAKE_C_COMPILER_LAUNCHER of the mutation builds: the compiler
# with -Wno-error last, so a mutant that only warns (a || b && c) still builds.
exec "$@" -Wno-error
