#!/usr/bin/env python3
# Writes the two synthetic capabilities files of this folder, laid out the
# way libvirt 9.0 prints `virsh capabilities` on such hosts (compare
# small-1socket-2cpu-1node.xml, taken from a real host).  Run it from this
# folder after changing a layout; the tests read only the XML.

def cpu_block(vendor, model, family, mod, stepping, sockets, cores, threads, features, pages):
    out = ["    <cpu>",
           "      <arch>x86_64</arch>",
           f"      <model>{model}</model>",
           f"      <vendor>{vendor}</vendor>",
           f"      <signature family='{family}' model='{mod}' stepping='{stepping}'/>",
           f"      <topology sockets='{sockets}' dies='1' cores='{cores}' threads='{threads}'/>",
           "      <maxphysaddr mode='emulate' bits='46'/>"]
    out += [f"      <feature name='{f}'/>" for f in features]
    out += [f"      <pages unit='KiB' size='{p}'/>" for p in pages]
    out.append("    </cpu>")
    return out


def caps(uuid, cpu, cells, distance):
    out = ["<capabilities>", "", "  <host>", f"    <uuid>{uuid}</uuid>"]
    out += cpu
    out += ["    <power_management>",
            "      <suspend_mem/>",
            "      <suspend_disk/>",
            "      <suspend_hybrid/>",
            "    </power_management>",
            "    <iommu support='yes'/>",
            "    <migration_features>",
            "      <live/>",
            "      <uri_transports>",
            "        <uri_transport>tcp</uri_transport>",
            "        <uri_transport>rdma</uri_transport>",
            "      </uri_transports>",
            "    </migration_features>",
            "    <topology>",
            f"      <cells num='{len(cells)}'>"]
    for c in cells:
        out.append(f"        <cell id='{c['id']}'>")
        out.append(f"          <memory unit='KiB'>{c['memory']}</memory>")
        for size, n in c['pages']:
            out.append(f"          <pages unit='KiB' size='{size}'>{n}</pages>")
        out.append("          <distances>")
        for o in cells:
            out.append(f"            <sibling id='{o['id']}' value='{distance(c['id'], o['id'])}'/>")
        out.append("          </distances>")
        out.append(f"          <cpus num='{len(c['cpus'])}'>")
        for cpu_id, sock, core, sib in sorted(c['cpus']):
            out.append(f"            <cpu id='{cpu_id}' socket_id='{sock}' die_id='0' core_id='{core}' siblings='{sib}'/>")
        out.append("          </cpus>")
        out.append("        </cell>")
    out += ["      </cells>",
            "    </topology>",
            "    <secmodel>",
            "      <model>apparmor</model>",
            "      <doi>0</doi>",
            "    </secmodel>",
            "    <secmodel>",
            "      <model>dac</model>",
            "      <doi>0</doi>",
            "      <baselabel type='kvm'>+64055:+64055</baselabel>",
            "      <baselabel type='qemu'>+64055:+64055</baselabel>",
            "    </secmodel>",
            "  </host>",
            "",
            "  <guest>",
            "    <os_type>hvm</os_type>",
            "    <arch name='x86_64'>",
            "      <wordsize>64</wordsize>",
            "      <emulator>/usr/bin/qemu-system-x86_64</emulator>",
            "      <machine maxCpus='255'>pc-i440fx-7.2</machine>",
            "      <machine canonical='pc-i440fx-7.2' maxCpus='255'>pc</machine>",
            "      <machine maxCpus='288'>pc-q35-7.2</machine>",
            "      <machine canonical='pc-q35-7.2' maxCpus='288'>q35</machine>",
            "      <domain type='qemu'/>",
            "      <domain type='kvm'/>",
            "    </arch>",
            "    <features>",
            "      <acpi default='on' toggle='yes'/>",
            "      <apic default='on' toggle='no'/>",
            "      <cpuselection/>",
            "      <deviceboot/>",
            "      <disksnapshot default='on' toggle='no'/>",
            "    </features>",
            "  </guest>",
            "",
            "</capabilities>",
            ""]
    return "\n".join(out)


# The NUMA cells of a two-way SMT host as Linux numbers it: first threads
# socket by socket, each one's sibling sibling_offset later ("0,128").
# Node 0 has mem0 kB, the others mem; pages(mem) their huge page pools.
def smt2_cells(nr_nodes, nodes_per_socket, cores_per_node, sibling_offset, mem0, mem, pages):
    cells = []
    for node in range(nr_nodes):
        sock = node // nodes_per_socket
        cpus = []
        for k in range(cores_per_node):
            core = (node % nodes_per_socket) * cores_per_node + k
            t0 = sock * nodes_per_socket * cores_per_node + core
            t1 = t0 + sibling_offset
            cpus.append((t0, sock, core, f"{t0},{t1}"))
            cpus.append((t1, sock, core, f"{t0},{t1}"))
        m = mem if node else mem0
        cells.append({'id': node, 'memory': m, 'cpus': cpus, 'pages': pages(m)})
    return cells


# The node distances: 10 to itself, near within a socket, far across.
def distances(nodes_per_socket, near, far):
    def dist(a, b):
        if a == b:
            return 10
        return near if a // nodes_per_socket == b // nodes_per_socket else far
    return dist


# 2 x AMD EPYC 7763 (64 cores, SMT2), NPS4: 8 nodes of 16 cores.  Linux
# numbers first threads 0-63 (socket 0), 64-127 (socket 1), second threads
# 128-255 likewise, so siblings read "0,128".
def big():
    cells = smt2_cells(8, 4, 16, 128, 130841256, 131596288,
                       lambda mem: [(4, mem // 4 - 2048 * 512), (2048, 1024), (1048576, 0)])
    dist = distances(4, 12, 32)
    feats = ['ht', 'cmp_legacy', 'extapic', 'ibs', 'skinit', 'wdt', 'tce', 'topoext', 'perfctr_core',
             'perfctr_nb', 'invtsc', 'ibrs', 'amd-ssbd', 'virt-ssbd', 'rdctl-no', 'skip-l1dfl-vmentry',
             'mds-no', 'pschange-mc-no', 'svm', 'npt', 'nrip-save', 'lbrv', 'tsc-scale', 'vmcb-clean',
             'flushbyasid', 'decodeassists', 'pause-filter', 'pfthreshold', 'avic', 'v-vmsave-vmload',
             'vgif', 'pdpe1gb']
    cpu = cpu_block('AMD', 'EPYC-Milan', 25, 1, 1, 2, 64, 2, feats, [4, 2048, 1048576])
    return caps('4c4c4544-0042-3510-8052-b7c04f4b4d32', cpu, cells, dist)


# 2 x Intel Xeon Gold 6134 (8 cores, HT) with sub-NUMA clustering: 4 nodes
# of 4 cores.  First threads 0-7 socket 0, 8-15 socket 1, second threads
# 16-31 likewise: siblings "0,16".
def four_node():
    cells = smt2_cells(4, 2, 4, 16, 31963260, 32588464,
                       lambda mem: [(4, mem // 4 - 512 * 512), (2048, 512), (1048576, 2)])
    dist = distances(2, 11, 21)
    feats = ['ds', 'acpi', 'ss', 'ht', 'tm', 'pbe', 'dtes64', 'monitor', 'ds_cpl', 'vmx', 'smx', 'est',
             'tm2', 'xtpr', 'pdcm', 'dca', 'osxsave', 'tsc_adjust', 'clflushopt', 'intel-pt', 'pku', 'ospke',
             'md-clear', 'stibp', 'arch-capabilities', 'ssbd', 'xsaves', 'pdpe1gb', 'invtsc', 'ibpb', 'ibrs',
             'amd-stibp', 'amd-ssbd', 'rsba', 'skip-l1dfl-vmentry', 'pschange-mc-no']
    cpu = cpu_block('Intel', 'Skylake-Server-IBRS', 6, 85, 4, 2, 8, 2, feats, [4, 2048, 1048576])
    return caps('00000000-0000-0000-0000-ac1f6b4a3e20', cpu, cells, dist)


with open('big-2socket-256cpu-8node.xml', 'w') as f:
    f.write(big())
with open('medium-2socket-32cpu-4node.xml', 'w') as f:
    f.write(four_node())
