#!/usr/bin/env bash
# ab.sh: two builds of libkcc in one process, so the VM's slow and fast spells hit both alike (it
# resolves about 1%, where separate runs move by 2x): moves (default) or the public mesh queries (-q).
#   test/bench/ab/ab.sh [-n CHARACTERS] [-f FRAMES] REV_A [REV_B]       moves
#   test/bench/ab/ab.sh -q [-b BATCH] [-r ROUNDS] REV_A [REV_B]         queries
# REV_A, REV_B: git revisions; without REV_B, B is the working tree. Levels: $LEVELS (default
# ../shared/levels). Each build runs its own moves or queries; B's kcc_* symbols are renamed B_kcc_*
# so both link into one program. Moves: the benchmark's wanderers frame by frame (256 x 600); prints,
# per level, each build's median us per move, B/A and whether the final positions of all characters
# agree bit for bit. Queries (-q): bench_layout's rays, exact box overlaps (kcc_mesh_overlap_aabb)
# and box sweeps (kcc_mesh_sweep_aabb), the same sets for both builds, each answered once by both and
# compared answer by answer, then ROUNDS (2000) batches of BATCH (250) queries of each kind, each
# batch run by A and B back to back in alternating order; prints, per level and kind, each build's
# median us per query, the median B/A of the paired batches with its quartiles, and whether every
# answer agrees. The load average before and after goes with the figures (the machine is shared).
set -euo pipefail
queries=0 n=256 frames=600 batch=250 rounds=2000
usage() { sed -n '2,15p' "$0"; exit 2; }
while getopts "qn:f:b:r:" o; do
  case $o in q) queries=1 ;; n) n=$OPTARG ;; f) frames=$OPTARG ;; b) batch=$OPTARG ;; r) rounds=$OPTARG ;;
    *) usage ;; esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
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
cf="-std=c11 -O2 -ffp-contract=off -I$root/test/bench -I$here $(pkg-config --cflags cglm 2>/dev/null)"
if [ $queries = 1 ]; then side=queries.c main=queries_main.c; else side=sim.c main=main.c; fi
cc $cf -I"$work/a/collide" -I"$work/a/controller" -c "$here/$side" -o "$work/sideA.o"
cc $cf -DSIDE_B -I"$b/collide" -I"$b/controller" -c "$here/$side" -o "$work/sideB.o"
cc $cf -I"$work/a/collide" -I"$work/a/controller" -c "$here/$main" -o "$work/main.o"
cc "$work/main.o" "$work/sideA.o" "$work/sideB.o" "$work/a/build/libkcc.a" "$work/libB.a" -lm -o "$work/ab"
echo "A = $1, B = ${2:-working tree}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $queries = 1 ]; then
  echo "queries: $rounds paired batches of $batch per kind${KCC_ISA:+; KCC_ISA=$KCC_ISA}"
  for l in "$levels"/*.obj; do "$work/ab" "$l" "$batch" "$rounds"; done
else
  echo "moves: $n characters, $frames frames"
  for l in "$levels"/*.obj; do "$work/ab" "$l" "$n" "$frames"; done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
