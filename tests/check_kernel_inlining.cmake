# Fails when a kernel object defines out of line a function of the vector layer (namespace
# <isa>::simd) or a lambda's call operator. Those are a few instructions each and are meant to
# melt into the kernel loops; a call there costs the call and spills every live vector register
# (all are caller-saved). GCC has kept plain `inline` ones out of line: AVX2 MhcBf16FromVf (54 %
# of pre bf16's time), AVX-512 StoreBf16BitsPair, and lambdas called per vector or per block
# (mhc_pre's `full` for 16-bit with 4-8 streams, SCE PackedRowsT's `storeBlock`). Functions
# meant to be calls (mhc's LoadTail / StoreTail, StoreRange) are named functions outside simd.
# Usage: cmake -DNM=<nm> -DOBJECTS=<a;b;...> -P check_kernel_inlining.cmake
set(found "")
foreach(obj ${OBJECTS})
  execute_process(COMMAND ${NM} -C --defined-only ${obj} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${obj}")
  endif()
  string(REPLACE "\n" ";" lines "${syms}")
  foreach(line ${lines})
    # "<address> <type> [return type ]aclnn_portable::<isa>::simd::Name[<...>](args...)": a
    # function of the namespace itself (simd::Vf as a return or argument type does not match).
    if(line MATCHES "^[0-9a-f]+ [tTW] (.* )?aclnn_portable::[a-z0-9_]+::simd::[A-Za-z0-9_]+(<[^(]*>)?\\(")
      string(APPEND found "  ${obj}: ${line}\n")
    endif()
    # "...::{lambda(args)#N}::operator()[<...>](args) const": a lambda's own call operator (a
    # function that merely takes a lambda type as a template argument does not end so).
    if(line MATCHES "^[0-9a-f]+ [tTW] .*\\{lambda\\([^{}]*\\)#[0-9]+\\}::operator\\(\\)(<[^(]*>)?\\([^()]*\\) const$")
      string(APPEND found "  ${obj}: ${line}\n")
    endif()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "vector-layer functions or lambdas compiled out of line in kernel objects (mark them always_inline):\n${found}")
endif()
list(LENGTH OBJECTS n)
message(STATUS "${n} kernel objects: every simd:: function and lambda inlined")
