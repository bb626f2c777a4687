#!/bin/sh
# The AVX2/AVX-512 object files may export only their entry points. Any other global or weak
# symbol (an inline function or template instantiated there) could be picked by the linker for
# code that runs on CPUs without those instructions. Usage: check_isa_symbols.sh NM OBJECT...
nm_tool=$1
shift
status=0
for obj in "$@"; do
  case "$obj" in
    *reduce_avx*) ;;
    *) continue ;;
  esac
  extra=$("$nm_tool" -g -C --defined-only "$obj" | grep -v -E 'loom::kernels::(reduce|divide)Avx(2|512)\(')
  if [ -n "$extra" ]; then
    echo "$obj exports symbols besides its entry points:"
    echo "$extra"
    status=1
  fi
  echo "checked $obj"
done
exit $status
