#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The image's entrypoint (installed as /usr/local/bin/fullmonte-entrypoint):
#   (no arguments)             runs the quickstart example, writing ./quickstart-out (in /sims)
#   SCRIPT.tcl [ARGS...]       fullmonte SCRIPT.tcl ARGS...: runs a user's script
#   fullmonte-run|-mcml|-vtk|fullmonte ARGS...   runs that program
#   -i                         an interactive fullmonte shell (docker run -it ... -i)
# The working directory is /sims (mount your folder there), so relative paths in a script, its
# outputs included, land in the mounted folder. Rendering (FluenceRenderer, fullmonte-vtk --png)
# needs an X display: where DISPLAY is unset, the program runs under a virtual one (xvfb-run).
# FM_NO_XVFB=1 turns that off.
set -e
prefix=${FM_PREFIX:-/opt/fullmonte}
examples=$prefix/share/fullmonte/examples

if [ $# -eq 0 ]; then
  echo "fullmonte: no script given: running the quickstart ($examples/quickstart.tcl) in $(pwd)" >&2
  set -- fullmonte "$examples/quickstart.tcl"
elif [ "$1" = -i ]; then
  shift
  set -- fullmonte "$@"
else
  case $1 in
    fullmonte|fullmonte-*)
      command -v "$1" >/dev/null 2>&1 || { echo "fullmonte: no program '$1' in this image" >&2; exit 127; } ;;
    *) set -- fullmonte "$@" ;;
  esac
fi

if [ -z "${DISPLAY:-}" ] && [ -z "${FM_NO_XVFB:-}" ] && command -v xvfb-run >/dev/null 2>&1; then
  exec xvfb-run -a -s "-screen 0 1280x1024x24" "$@"
fi
exec "$@"
