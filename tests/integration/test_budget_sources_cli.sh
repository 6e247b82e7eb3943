#!/usr/bin/env bash
# test_budget_sources_cli.sh -- BUDGET_SOURCES as a user meets it: advertise patches nothing
# for another source's budgets, and a bad list stops start-up naming the setting.
source "$(dirname "$0")/../lib/harness.sh"

# No API server is configured: with resource out of the list, advertise must not
# need one (it has nothing to patch) and must say why.
out=$(BUDGET_SOURCES=hami,kai "$GVW_BINARY" advertise --once 2>&1)
rc=$?
expect_eq "advertise with hami,kai succeeds doing nothing" 0 "$rc"
expect_contains "and says capacity is resource's alone" \
    "capacity advertising is only for BUDGET_SOURCES=resource; BUDGET_SOURCES=hami,kai patches nothing" \
    "$out"

out=$("$GVW_BINARY" advertise --once --budget-sources dra 2>&1)
expect_eq "the flag works the same" 0 "$?"
expect_contains "naming the list" "BUDGET_SOURCES=dra patches nothing" "$out"

# With resource in the list advertise goes on as before (here: no API server).
out=$(BUDGET_SOURCES=kai,resource "$GVW_BINARY" advertise --once 2>&1)
expect_eq "with resource listed it tries to patch" 1 "$?"
expect_contains "and needs the API server" "no Kubernetes API server" "$out"

out=$(BUDGET_SOURCES=hami,hami "$GVW_BINARY" check 2>&1)
expect_eq "a repeated word stops start-up" 2 "$?"
expect_eq "naming the setting" "gpu-vram-watchdog: BUDGET_SOURCES: 'hami' is listed twice" "$out"
out=$(DRA_DRIVER='gpu nvidia' "$GVW_BINARY" check 2>&1)
expect_eq "a bad driver stops start-up" 2 "$?"
expect_contains "naming the setting" "DRA_DRIVER: 'gpu nvidia' is not a driver name" "$out"

finish
