cmd_arch/x86/kernel/head_64.o := ccache gcc -Wp,-MMD,arch/x86/kernel/.head_64.o.d -nostdinc -I../arch/x86/include -I./arch/x86/include/generated -I../include -I./include -I../arch/x86/include/uapi -I./arch/x86/include/generated/uapi -I../include/uapi -I./include/generated/uapi -include ../include/linux/compiler-version.h -include ../include/linux/kconfig.h -D__KERNEL__ -fmacro-prefix-map=../= -D__ASSEMBLY__ -fno-PIE -m64 -I ../arch/x86/kernel -I ./arch/x86/kernel    -c -o arch/x86/kernel/head_64.o ../arch/x86/kernel/head_64.S  ; ./tools/objtool/objtool --hacks=jump_label --hacks=noinstr --orc --static-call --uaccess   arch/x86/kernel/head_64.o

source_arch/x86/kernel/head_64.o := ../arch/x86/kernel/head_64.S

deps_arch/x86/kernel/head_64.o := \
    $(wildcard include/config/AMD_MEM_ENCRYPT) \
    $(wildcard include/config/X86_MCE) \
    $(wildcard include/config/X86_5LEVEL) \
    $(wildcard include/config/HOTPLUG_CPU) \
    $(wildcard include/config/PAGE_TABLE_ISOLATION) \
    $(wildcard include/config/XEN_PV) \
    $(wildcard include/config/PVH) \
  ../include/linux/compiler-version.h \
    $(wildcard include/config/CC_VERSION_TEXT) \
  ../include/linux/kconfig.h \
    $(wildcard include/config/CPU_BIG_ENDIAN) \
    $(wildcard include/config/BOOGER) \
    $(wildcard include/config/FOO) \
  ../include/linux/linkage.h \
    $(wildcard include/config/ARCH_USE_SYM_ANNOTATIONS) \
  ../include/linux/compiler_types.h \
    $(wildcard include/config/DEBUG_INFO_BTF) \
    $(wildcard include/config/PAHOLE_HAS_BTF_TAG) \
    $(wildcard include/config/HAVE_ARCH_COMPILER_H) \
    $(wildcard include/config/CC_HAS_ASM_INLINE) \
  ../include/linux/stringify.h \
  ../include/linux/export.h \
    $(wildcard include/config/MODVERSIONS) \
    $(wildcard include/config/HAVE_ARCH_PREL32_RELOCATIONS) \
    $(wildcard include/config/MODULES) \
    $(wildcard include/config/TRIM_UNUSED_KSYMS) \
  ../arch/x86/include/asm/linkage.h \
    $(wildcard include/config/64BIT) \
    $(wildcard include/config/X86_32) \
    $(wildcard include/config/X86_64) \
    $(wildcard include/config/X86_ALIGNMENT_16) \
    $(wildcard include/config/RETHUNK) \
    $(wildcard include/config/RETPOLINE) \
    $(wildcard include/config/SLS) \
  ../arch/x86/include/asm/ibt.h \
    $(wildcard include/config/X86_KERNEL_IBT) \
  ../include/linux/types.h \
    $(wildcard include/config/HAVE_UID16) \
    $(wildcard include/config/UID16) \
    $(wildcard include/config/ARCH_DMA_ADDR_T_64BIT) \
    $(wildcard include/config/PHYS_ADDR_T_64BIT) \
    $(wildcard include/config/ARCH_32BIT_USTAT_F_TINODE) \
  ../include/uapi/linux/types.h \
  arch/x86/include/generated/uapi/asm/types.h \
  ../include/uapi/asm-generic/types.h \
  ../include/asm-generic/int-ll64.h \
  ../include/uapi/asm-generic/int-ll64.h \
  ../arch/x86/include/uapi/asm/bitsperlong.h \
  ../include/asm-generic/bitsperlong.h \
  ../include/uapi/asm-generic/bitsperlong.h \
  ../include/linux/threads.h \
    $(wildcard include/config/NR_CPUS) \
    $(wildcard include/config/BASE_SMALL) \
  ../include/linux/init.h \
    $(wildcard include/config/STRICT_KERNEL_RWX) \
    $(wildcard include/config/STRICT_MODULE_RWX) \
    $(wildcard include/config/LTO_CLANG) \
  ../include/linux/compiler.h \
    $(wildcard include/config/TRACE_BRANCH_PROFILING) \
    $(wildcard include/config/PROFILE_ALL_BRANCHES) \
    $(wildcard include/config/OBJTOOL) \
  arch/x86/include/generated/asm/rwonce.h \
  ../include/asm-generic/rwonce.h \
  ../include/linux/pgtable.h \
    $(wildcard include/config/MMU) \
    $(wildcard include/config/PGTABLE_LEVELS) \
    $(wildcard include/config/HIGHPTE) \
    $(wildcard include/config/TRANSPARENT_HUGEPAGE) \
    $(wildcard include/config/ARCH_HAS_NONLEAF_PMD_YOUNG) \
    $(wildcard include/config/GUP_GET_PTE_LOW_HIGH) \
    $(wildcard include/config/HAVE_ARCH_TRANSPARENT_HUGEPAGE_PUD) \
    $(wildcard include/config/HAVE_ARCH_SOFT_DIRTY) \
    $(wildcard include/config/ARCH_ENABLE_THP_MIGRATION) \
    $(wildcard include/config/ARCH_HAS_PTE_DEVMAP) \
    $(wildcard include/config/NUMA_BALANCING) \
    $(wildcard include/config/HAVE_ARCH_HUGE_VMAP) \
    $(wildcard include/config/X86_ESPFIX64) \
    $(wildcard include/config/HUGETLB_PAGE) \
  ../include/linux/pfn.h \
  ../arch/x86/include/asm/pgtable.h \
    $(wildcard include/config/DEBUG_WX) \
    $(wildcard include/config/PARAVIRT_XXL) \
    $(wildcard include/config/HAVE_ARCH_USERFAULTFD_WP) \
    $(wildcard include/config/DEBUG_VM) \
    $(wildcard include/config/SMP) \
    $(wildcard include/config/X86_INTEL_MEMORY_PROTECTION_KEYS) \
    $(wildcard include/config/PAGE_TABLE_CHECK) \
  ../include/linux/mem_encrypt.h \
    $(wildcard include/config/ARCH_HAS_MEM_ENCRYPT) \
  ../arch/x86/include/asm/page.h \
  ../arch/x86/include/asm/page_types.h \
    $(wildcard include/config/PHYSICAL_START) \
    $(wildcard include/config/PHYSICAL_ALIGN) \
    $(wildcard include/config/DYNAMIC_PHYSICAL_MASK) \
  ../include/linux/const.h \
  ../include/vdso/const.h \
  ../include/uapi/linux/const.h \
  ../arch/x86/include/asm/page_64_types.h \
    $(wildcard include/config/KASAN) \
    $(wildcard include/config/DYNAMIC_MEMORY_LAYOUT) \
    $(wildcard include/config/RANDOMIZE_BASE) \
  ../arch/x86/include/asm/page_64.h \
    $(wildcard include/config/DEBUG_VIRTUAL) \
    $(wildcard include/config/FLATMEM) \
    $(wildcard include/config/X86_VSYSCALL_EMULATION) \
  ../include/asm-generic/memory_model.h \
    $(wildcard include/config/SPARSEMEM_VMEMMAP) \
    $(wildcard include/config/SPARSEMEM) \
  ../include/asm-generic/getorder.h \
  ../arch/x86/include/asm/pgtable_types.h \
    $(wildcard include/config/X86_PAE) \
    $(wildcard include/config/MEM_SOFT_DIRTY) \
    $(wildcard include/config/PROC_FS) \
  ../arch/x86/include/asm/pgtable_64_types.h \
    $(wildcard include/config/RANDOMIZE_MEMORY) \
    $(wildcard include/config/KMSAN) \
    $(wildcard include/config/DEBUG_KMAP_LOCAL_FORCE_MAP) \
  ../arch/x86/include/asm/sparsemem.h \
    $(wildcard include/config/NUMA_KEEP_MEMINFO) \
  ../arch/x86/include/asm/pgtable_64.h \
  ../arch/x86/include/asm/segment.h \
  ../arch/x86/include/asm/alternative.h \
    $(wildcard include/config/MITIGATION_ITS) \
  ../arch/x86/include/asm/asm.h \
    $(wildcard include/config/KPROBES) \
  ../arch/x86/include/asm/extable_fixup_types.h \
  ../arch/x86/include/asm/bug.h \
    $(wildcard include/config/GENERIC_BUG) \
    $(wildcard include/config/DEBUG_BUGVERBOSE) \
  ../include/linux/instrumentation.h \
    $(wildcard include/config/NOINSTR_VALIDATION) \
  ../include/linux/objtool.h \
    $(wildcard include/config/FRAME_POINTER) \
  ../include/asm-generic/bug.h \
    $(wildcard include/config/BUG) \
    $(wildcard include/config/GENERIC_BUG_RELATIVE_POINTERS) \
  ../include/linux/once_lite.h \
  ../arch/x86/include/asm/cache.h \
    $(wildcard include/config/X86_L1_CACHE_SHIFT) \
    $(wildcard include/config/X86_INTERNODE_CACHE_SHIFT) \
    $(wildcard include/config/X86_VSMP) \
  ../arch/x86/include/asm/msr.h \
    $(wildcard include/config/TRACEPOINTS) \
  ../arch/x86/include/asm/msr-index.h \
  ../include/linux/bits.h \
  ../include/vdso/bits.h \
  ../arch/x86/include/asm/processor-flags.h \
    $(wildcard include/config/VM86) \
  ../arch/x86/include/uapi/asm/processor-flags.h \
  ../arch/x86/include/asm/percpu.h \
    $(wildcard include/config/X86_64_SMP) \
    $(wildcard include/config/X86_CMPXCHG64) \
  ../arch/x86/include/asm/nops.h \
  ../arch/x86/kernel/../entry/calling.h \
    $(wildcard include/config/CPU_IBRS_ENTRY) \
    $(wildcard include/config/GCC_PLUGIN_STACKLEAK) \
  ../include/linux/jump_label.h \
    $(wildcard include/config/JUMP_LABEL) \
    $(wildcard include/config/HAVE_ARCH_JUMP_LABEL_RELATIVE) \
  ../arch/x86/include/asm/unwind_hints.h \
  ../arch/x86/include/asm/orc_types.h \
  ../arch/x86/include/asm/cpufeatures.h \
  ../arch/x86/include/asm/required-features.h \
    $(wildcard include/config/X86_MINIMUM_CPU_FAMILY) \
    $(wildcard include/config/MATH_EMULATION) \
    $(wildcard include/config/X86_CMOV) \
    $(wildcard include/config/X86_P6_NOP) \
    $(wildcard include/config/MATOM) \
  ../arch/x86/include/asm/disabled-features.h \
    $(wildcard include/config/X86_UMIP) \
    $(wildcard include/config/CPU_UNRET_ENTRY) \
    $(wildcard include/config/INTEL_IOMMU_SVM) \
    $(wildcard include/config/X86_SGX) \
    $(wildcard include/config/INTEL_TDX_GUEST) \
  ../arch/x86/include/asm/asm-offsets.h \
  include/generated/asm-offsets.h \
  ../arch/x86/include/uapi/asm/ptrace-abi.h \
  ../arch/x86/include/asm/nospec-branch.h \
    $(wildcard include/config/CPU_SRSO) \
    $(wildcard include/config/CPU_IBPB_ENTRY) \
    $(wildcard include/config/BPF_JIT) \
  ../include/linux/static_key.h \
  ../arch/x86/include/asm/msr-index.h \
  arch/x86/include/generated/asm/export.h \
  ../include/asm-generic/export.h \
  ../arch/x86/include/asm/fixmap.h \
    $(wildcard include/config/PROVIDE_OHCI1394_DMA_INIT) \
    $(wildcard include/config/X86_LOCAL_APIC) \
    $(wildcard include/config/X86_IO_APIC) \
    $(wildcard include/config/KMAP_LOCAL) \
    $(wildcard include/config/PCI_MMCONFIG) \
    $(wildcard include/config/ACPI_APEI_GHES) \
    $(wildcard include/config/INTEL_TXT) \
  arch/x86/include/generated/asm/kmap_size.h \
  ../include/asm-generic/kmap_size.h \
    $(wildcard include/config/DEBUG_KMAP_LOCAL) \
  ../arch/x86/kernel/verify_cpu.S \
  ../arch/x86/kernel/sev_verify_cbit.S \
  ../arch/x86/kernel/../../x86/xen/xen-head.S \
    $(wildcard include/config/XEN) \
    $(wildcard include/config/XEN_PV_SMP) \

arch/x86/kernel/head_64.o: $(deps_arch/x86/kernel/head_64.o)

$(deps_arch/x86/kernel/head_64.o):

arch/x86/kernel/head_64.o: $(wildcard ./tools/objtool/objtool)
