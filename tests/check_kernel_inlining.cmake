# Fails when a kernel object defines a function of the vector layer (namespace <isa>::simd) out
# of line. Those are a few instructions each and are meant to melt into the kernel loops; a call
# there costs the call and spills every live vector register (all are caller-saved), and GCC has
# twice kept a plain `inline` one out of line in the mhc kernels (AVX2 MhcBf16FromVf: 54 % of
# pre bf16's time; AVX-512 StoreBf16BitsPair). Functions meant to be calls (mhc's LoadTail /
# StoreTail) live outside the simd namespace.
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
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "vector-layer functions compiled out of line in kernel objects (mark them always_inline):\n${found}")
endif()
list(LENGTH OBJECTS n)
message(STATUS "${n} kernel objects: every simd:: function inlined")
