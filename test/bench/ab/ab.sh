#!/usr/bin/env bash
# ab.sh: two builds of libkcc move the benchmark's wanderers in one process, frame by frame, so the
# VM's slow and fast spells hit both alike (it resolves about 1%, where separate runs move by 2x).
#   test/bench/ab/ab.sh [-n CHARACTERS] [-f FRAMES] REV_A [REV_B]
# REV_A, REV_B: git revisions; without REV_B, B is the working tree. Levels: $LEVELS (default
# ../shared/levels). Each build runs its own moves; B's kcc_* symbols are renamed B_kcc_* so both
# link into one program. Prints, per level, each build's median us per move, B/A and whether the
# final positions of all characters agree bit for bit.
set -euo pipefail
n=256 frames=600
while getopts "n:f:" o; do
  case $o in n) n=$OPTARG ;; f) frames=$OPTARG ;; *) sed -n '2,8p' "$0"; exit 2 ;; esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,8p' "$0"; exit 2; }
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
here=$root/test/bench/ab
levels=${LEVELS:-$root/../shared/levels}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tree() { # tree REV DIR: the sources of REV in DIR, built
  mkdir -p "$2" && git -C "$root" archive "$1" | tar -x -C "$2"
  make -C "$2" --no-print-directory lib >"$2.log" 2>&1 || { cat "$2.log"; echo "ab.sh: building $1 failed"; exit 1; }
}
tree "$1" "$work/a"
if [ $# -ge 2 ]; then tree "$2" "$work/b"; b=$work/b; else
  make -C "$root" --no-print-directory lib >"$work/b.log" 2>&1 || { cat "$work/b.log"; exit 1; }; b=$root; fi

nm -g --defined-only "$b/build/libkcc.a" 2>/dev/null | awk 'NF == 3 && $3 ~ /^kcc_/ { print $3, "B_" $3 }' \
  | sort -u >"$work/names.txt"
objcopy --redefine-syms="$work/names.txt" "$b/build/libkcc.a" "$work/libB.a"
cf="-std=c11 -O2 -ffp-contract=off -I$root/test/bench $(pkg-config --cflags cglm 2>/dev/null)"
cc $cf -I"$work/a/collide" -I"$work/a/controller" -c "$here/sim.c" -o "$work/simA.o"
cc $cf -DSIDE_B -I"$b/collide" -I"$b/controller" -c "$here/sim.c" -o "$work/simB.o"
cc $cf -I"$work/a/collide" -I"$work/a/controller" -c "$here/main.c" -o "$work/main.o"
cc "$work/main.o" "$work/simA.o" "$work/simB.o" "$work/a/build/libkcc.a" "$work/libB.a" -lm -o "$work/ab"
echo "A = $1, B = ${2:-working tree}; $n characters, $frames frames"
for l in "$levels"/*.obj; do "$work/ab" "$l" "$n" "$frames"; done
