#!/bin/sh
# An example capability provisioner for `city` (see README, "Capabilities").
#
#   demo-provisioner.sh provision-peer   <personality> <runtime> <cwd> <occasion>
#   demo-provisioner.sh unprovision-peer <personality> <runtime> <cwd> <occasion>
#
# Its "surface" is one marker file per (personality, runtime): in the endpoint's
# private directory when the core gives one ($CITY_PRIVATE_DIR), else under
# <cwd>/.city-demo/. It is idempotent, removes only its own surface, holds its
# own lock, and exits 0 only when the surface is in place (stderr otherwise).
set -eu

verb=${1:?verb}; personality=${2:?personality}; runtime=${3:?runtime}; cwd=${4:?cwd}; occasion=${5:-unknown}

if [ -n "${CITY_PRIVATE_DIR:-}" ]; then
  dir=$CITY_PRIVATE_DIR
else
  dir=$cwd/.city-demo
fi
surface=$dir/demo-$runtime-$personality.json

lock=$dir/.demo.lock
mkdir -p "$dir"
tries=0
until mkdir "$lock" 2>/dev/null; do
  tries=$((tries + 1))
  [ "$tries" -gt 100 ] && { echo "demo: $lock is held by another call" >&2; exit 1; }
  sleep 0.05
done
trap 'rmdir "$lock"' EXIT

case $verb in
  provision-peer)
    printf '{"personality":"%s","runtime":"%s","occasion":"%s"}\n' "$personality" "$runtime" "$occasion" > "$surface.tmp"
    mv "$surface.tmp" "$surface"
    ;;
  unprovision-peer)
    rm -f "$surface"
    ;;
  *)
    echo "demo: unknown verb $verb" >&2
    exit 2
    ;;
esac
