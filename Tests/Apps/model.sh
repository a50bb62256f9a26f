# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by the app tests: writes a small valid TIM-OS model (two tetras, two regions) into $1.
write_model() {
  printf '5\n2\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n1 2 3 4 1\n2 3 4 5 2\n' >"$1/m.mesh"
  printf '1\n2\n0.1 10 0.9 1.4\n0.2 20 0.8 1.3\n1\n1.0\n' >"$1/m.opt"
  printf '1\n1 0.2 0.2 0.2 1000\n' >"$1/m.source"
}
