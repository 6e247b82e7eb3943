#!/usr/bin/env bash
# bench_front_door.sh -- the front-door attacks with the shipped 10 s / 30 s deadlines;
# prints the figures table of docs/robustness.md (VmHWM, /healthz p99 and max per attack).
GVW_FRONT_DOOR_DEFAULTS=1 exec bash "$(dirname "$0")/test_front_door.sh" "$@"
