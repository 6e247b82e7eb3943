#!/usr/bin/env bash
# lint.sh -- the style tools the project declares, enforced: clang-format (the root
# .clang-format, --dry-run -Werror), cppcheck over every tracked C file, and the
# folders' walls (an internal NAME_int.h is included only in its own folder).
# Exits 1 naming each file that differs or each finding; 0 when all are quiet.
# usage: scripts/lint.sh   (run from anywhere; ctest runs it as `lint`)
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in clang-format cppcheck; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "lint: $tool not found; install the Debian package $tool (scripts/install-deps.sh)" >&2; exit 1; }
done

mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
[ "${#files[@]}" -gt 0 ] || { echo "lint: no C files found" >&2; exit 1; }
rc=0

# clang-format: one line per file that is not formatted as .clang-format says.
bad=0
for f in "${files[@]}"; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "lint: clang-format: $f differs (clang-format -i $f)"
        bad=$((bad + 1))
    fi
done
echo "lint: clang-format: ${#files[@]} files, $bad differ"
[ "$bad" -eq 0 ] || rc=1

# Walls: a folder's internal header (NAME_int.h) is included only inside its
# own folder (and by tests, which are white-box); everything else goes through
# the headers the folder's library exports.
walls=0
for h in $(printf '%s\n' "${files[@]}" | grep '_int\.h$'); do
    dir=$(dirname "$h")
    while IFS= read -r user; do
        case $user in "$dir"/* | tests/*) ;; *)
            echo "lint: walls: $user includes $h, internal to $dir/"
            walls=$((walls + 1)) ;;
        esac
    done < <(grep -l "#include \"$(basename "$h")\"" "${files[@]}" || true)
done
echo "lint: walls: $walls internal headers reached from outside their folder"
[ "$walls" -eq 0 ] || rc=1

# cppcheck: warnings and portability, as errors. Inline suppressions carry
# their reason beside them; nothing is suppressed globally.
mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep '\.c$')
if ! cppcheck --quiet --enable=warning,portability --std=c11 --inline-suppr \
    --error-exitcode=1 -j"$(nproc 2>/dev/null || echo 2)" \
    -D_POSIX_C_SOURCE=200809L -DGVW_VERSION='"lint"' \
    -I common/util -I common/json "${sources[@]}"; then
    echo "lint: cppcheck reported the findings above"
    rc=1
else
    echo "lint: cppcheck: ${#sources[@]} sources, no finding"
fi
exit "$rc"
