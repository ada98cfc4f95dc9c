//! The device catalogue: memory capacity, memory and host-link bandwidth, and dense BF16
//! throughput of the GPUs people train on, with MIG slices as devices of their own.
//!
//! Sources: memory-formulas.md §A8 (NVIDIA datasheets via glennklockwood.com, the H100
//! PCIe product brief PB-11133-001, the L40S datasheet, AMD MI300X pages). Capacities are
//! what the driver reports as total memory (`nvidia-smi`), not the marketing figure, since
//! that is what a run can use; figures marked "from memory" in the reference are marked
//! here too. Host links are per direction (PCIe Gen3 x16 ≈ 16 GB/s, Gen4 ≈ 32, Gen5 ≈ 64).

use serde::{Deserialize, Serialize};

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;
const GB: f64 = 1e9;

/// One GPU (or one MIG slice of a GPU), in SI units: bytes, bytes per second, FLOP/s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub id: String,
    pub name: String,
    /// Memory a process can use, in bytes.
    pub capacity_bytes: f64,
    /// Device-memory bandwidth, bytes/s.
    pub hbm_bandwidth: f64,
    /// Host link (PCIe) bandwidth per direction, bytes/s: the path spilled memory takes.
    pub host_link_bandwidth: f64,
    /// Dense BF16 (FP16 where the GPU has no BF16) tensor throughput with FP32 accumulate, TFLOP/s.
    pub bf16_tflops: f64,
    /// GPU-to-GPU bandwidth per direction, bytes/s (NVLink, or PCIe without it).
    pub interconnect_bandwidth: f64,
    /// CUDA compute-capability major version (7 Volta/Turing, 8 Ampere/Ada, 9 Hopper,
    /// 10/12 Blackwell); 0 for non-NVIDIA devices. Decides cuBLAS workspace sizes.
    pub compute_major: u32,
    /// Whether this is a MIG slice.
    pub mig: bool,
    /// What kind of machine it sits in, which decides what happens beyond its memory.
    #[serde(default)]
    pub class: DeviceClass,
    /// GPUs in one node: collectives whose ranks span more than this cross the network.
    #[serde(default = "default_gpus_per_node")]
    pub gpus_per_node: u64,
    /// Network bandwidth per GPU per direction between nodes, bytes/s.
    #[serde(default = "default_network_bandwidth")]
    pub network_bandwidth: f64,
    /// Thermal design power (board power limit), watts: the most the GPU draws, so a run's
    /// energy at TDP is an upper bound for the GPUs alone (sources in the comment after `struct Gpu`). 0 when unknown.
    #[serde(default)]
    pub tdp_w: f64,
}

/// Eight GPUs per node, as in NVIDIA's DGX/HGX H100 and B200 systems and AMD's MI300X
/// platform.
pub const DEFAULT_GPUS_PER_NODE: u64 = 8;
/// One 400 Gb/s InfiniBand NDR adapter per GPU (DGX H100: eight ConnectX-7), 50 GB/s per direction.
pub const DEFAULT_NETWORK_BANDWIDTH: f64 = 50.0 * GB;

fn default_gpus_per_node() -> u64 {
    DEFAULT_GPUS_PER_NODE
}

fn default_network_bandwidth() -> f64 {
    DEFAULT_NETWORK_BANDWIDTH
}

/// The kind of GPU, for the platform Headroom assumes when the user does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceClass {
    /// Data-centre GPU, almost always on Linux: beyond its memory, CUDA runs out of memory.
    #[default]
    Datacenter,
    /// GeForce / workstation card, often on Windows, where the driver's sysmem fallback spills.
    Consumer,
    /// Grace-Hopper / Grace-Blackwell superchip: CPU memory over NVLink-C2C.
    Superchip,
}

struct Gpu {
    id: &'static str,
    name: &'static str,
    capacity_bytes: f64,
    hbm_gbs: f64,
    host_gbs: f64,
    tflops: f64,
    link_gbs: f64,
    major: u32,
    /// MIG profiles: (suffix, compute sevenths, memory eighths).
    mig: &'static [(&'static str, u32, u32)],
    /// Thermal design power, watts (sources in the comment after `struct Gpu`).
    tdp_w: f64,
    class: DeviceClass,
}

// Where each GPU's thermal design power comes from (the board power the vendor's datasheet
// gives; "from memory — verify" where the datasheet was not read for this table):
// - H100 PCIe 350 W: NVIDIA H100 PCIe product brief PB-11133-001 v02 (Nov 2022), "maximum
//   thermal design power (TDP) level of 350 W". H100 SXM "up to 700 W (configurable)", A100
//   SXM 400 W and H100 SXM 700 W: NVIDIA H100/A100 datasheets as tabulated by
//   pricegpu.pages.dev "H100 vs A100 cloud pricing" (2026); L40S 350 W, A100 400 W: the same
//   figures in cyfuture.ai's H100/A100/L40S rental guide (2026). H100 NVL 400 W: One Stop
//   Systems' blog ("the H100 NVL, increasing power density to 400W").
// - From the vendors' datasheets, from memory — verify: H200 SXM 700 W, B200 (HGX) 1,000 W,
//   A100 PCIe 80GB 300 W, L4 72 W, T4 70 W, V100 SXM2 300 W, H20 400 W, A30 165 W, A40 300 W,
//   L40 300 W, RTX A6000 300 W, RTX 6000 Ada 300 W, MI300X 750 W, MI325X 1,000 W, MI250X
//   560 W per OAM module (280 W per GCD, the device PyTorch sees), GH200 up to 1,000 W for the
//   whole module (Grace CPU and its memory included); A10G 300 W is the power limit
//   `nvidia-smi` shows on AWS g5 instances (the PCIe A10 card is 150 W); GeForce cards at
//   their total board power (RTX 3060 170, 3090 350, 4060 Ti 16GB 165, 4070 Ti 285, 4080 320,
//   4090 450, 5090 575 W).
// - A MIG slice is charged its compute share (sevenths) of the board's TDP.

const A100_MIG_80: &[(&str, u32, u32)] = &[("1g.10gb", 1, 1), ("2g.20gb", 2, 2), ("3g.40gb", 3, 4), ("4g.40gb", 4, 4), ("7g.80gb", 7, 8)];
const A100_MIG_40: &[(&str, u32, u32)] = &[("1g.5gb", 1, 1), ("2g.10gb", 2, 2), ("3g.20gb", 3, 4), ("4g.20gb", 4, 4), ("7g.40gb", 7, 8)];
const H100_MIG: &[(&str, u32, u32)] = &[("1g.10gb", 1, 1), ("1g.20gb", 1, 2), ("2g.20gb", 2, 2), ("3g.40gb", 3, 4), ("4g.40gb", 4, 4), ("7g.80gb", 7, 8)];

/// The catalogue (memory-formulas.md §A8). Capacities are `nvidia-smi` totals: H100 81,559,
/// A100-80GB 81,920, A100-40GB 40,960, A10(G) 23,028, L40S 46,068, L4 23,034, T4 15,360 MiB as
/// listed in modal-labs/modal-client PR #2797; B200 178.35 GiB and 7.67 TB/s as queried from
/// the driver in pytorch/ao PR #4002; the others (H200 143,771, V100 32,768, RTX 24,564–32,607
/// MiB, MI300X 192 GiB) from memory — verify. Bandwidths and TFLOPS from the datasheets cited
/// in §A8.
#[rustfmt::skip] // a table: one GPU per line
const GPUS: &[Gpu] = &[
    Gpu { id: "h100-sxm-80gb", name: "H100 SXM 80GB", capacity_bytes: 81559.0 * MIB, hbm_gbs: 3350.0, host_gbs: 64.0, tflops: 989.4, link_gbs: 450.0, major: 9, mig: H100_MIG, tdp_w: 700.0, class: DeviceClass::Datacenter },
    Gpu { id: "h100-pcie-80gb", name: "H100 PCIe 80GB", capacity_bytes: 81559.0 * MIB, hbm_gbs: 2000.0, host_gbs: 64.0, tflops: 756.0, link_gbs: 300.0, major: 9, mig: &[], tdp_w: 350.0, class: DeviceClass::Datacenter },
    Gpu { id: "h200-141gb", name: "H200 141GB", capacity_bytes: 143771.0 * MIB, hbm_gbs: 4800.0, host_gbs: 64.0, tflops: 989.4, link_gbs: 450.0, major: 9, mig: &[], tdp_w: 700.0, class: DeviceClass::Datacenter },
    Gpu { id: "b200-192gb", name: "B200 192GB", capacity_bytes: 178.35 * GIB, hbm_gbs: 7672.0, host_gbs: 64.0, tflops: 2250.0, link_gbs: 900.0, major: 10, mig: &[], tdp_w: 1000.0, class: DeviceClass::Datacenter },
    Gpu { id: "a100-80gb", name: "A100 80GB SXM", capacity_bytes: 81920.0 * MIB, hbm_gbs: 2039.0, host_gbs: 32.0, tflops: 312.0, link_gbs: 300.0, major: 8, mig: A100_MIG_80, tdp_w: 400.0, class: DeviceClass::Datacenter },
    // A100 PCIe 80GB: the SXM part's memory at 1,935 GB/s, PCIe Gen4, NVLink bridge 600 GB/s (A100 datasheet).
    Gpu { id: "a100-pcie-80gb", name: "A100 80GB PCIe", capacity_bytes: 81920.0 * MIB, hbm_gbs: 1935.0, host_gbs: 32.0, tflops: 312.0, link_gbs: 300.0, major: 8, mig: &[], tdp_w: 300.0, class: DeviceClass::Datacenter },
    Gpu { id: "a100-40gb", name: "A100 40GB SXM", capacity_bytes: 40960.0 * MIB, hbm_gbs: 1555.0, host_gbs: 32.0, tflops: 312.0, link_gbs: 300.0, major: 8, mig: A100_MIG_40, tdp_w: 400.0, class: DeviceClass::Datacenter },
    Gpu { id: "l40s-48gb", name: "L40S 48GB", capacity_bytes: 46068.0 * MIB, hbm_gbs: 864.0, host_gbs: 32.0, tflops: 362.05, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 350.0, class: DeviceClass::Datacenter },
    Gpu { id: "l4-24gb", name: "L4 24GB", capacity_bytes: 23034.0 * MIB, hbm_gbs: 300.0, host_gbs: 32.0, tflops: 121.0, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 72.0, class: DeviceClass::Datacenter },
    Gpu { id: "a10g-24gb", name: "A10G 24GB", capacity_bytes: 23028.0 * MIB, hbm_gbs: 600.0, host_gbs: 32.0, tflops: 70.0, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 300.0, class: DeviceClass::Datacenter },
    Gpu { id: "t4-16gb", name: "T4 16GB", capacity_bytes: 15360.0 * MIB, hbm_gbs: 320.0, host_gbs: 16.0, tflops: 65.0, link_gbs: 16.0, major: 7, mig: &[], tdp_w: 70.0, class: DeviceClass::Datacenter },
    Gpu { id: "v100-32gb", name: "V100 SXM2 32GB", capacity_bytes: 32768.0 * MIB, hbm_gbs: 900.0, host_gbs: 16.0, tflops: 125.0, link_gbs: 150.0, major: 7, mig: &[], tdp_w: 300.0, class: DeviceClass::Datacenter },
    // Added for issue 11, from the vendors' datasheets (capacities are the marketing figure in
    // MiB unless a driver total is known; bf16 is dense tensor throughput with FP32 accumulate;
    // from memory — verify): NVIDIA A30 (24 GB, 933 GB/s, 165 TFLOPS, NVLink bridge 200 GB/s),
    // A40 (48 GB, 696 GB/s, 149.7, NVLink bridge 112.5 GB/s), L40 (48 GB, 864 GB/s, 181),
    // H100 NVL (94 GB, 3.9 TB/s, 835, NVLink bridge 600 GB/s), H20 (96 GB, 4.0 TB/s, 148,
    // NVLink 900 GB/s); AMD MI325X (256 GB, 6 TB/s, 1,307 — the MI300X's compute), MI250X as
    // PyTorch sees it: one of its two GCDs, 64 GB, 1.6 TB/s, 191.5 TFLOPS, Infinity Fabric
    // 100 GB/s to its peers.
    Gpu { id: "h100-nvl-94gb", name: "H100 NVL 94GB", capacity_bytes: 95830.0 * MIB, hbm_gbs: 3900.0, host_gbs: 64.0, tflops: 835.0, link_gbs: 300.0, major: 9, mig: &[], tdp_w: 400.0, class: DeviceClass::Datacenter },
    Gpu { id: "h20-96gb", name: "H20 96GB", capacity_bytes: 97871.0 * MIB, hbm_gbs: 4000.0, host_gbs: 64.0, tflops: 148.0, link_gbs: 450.0, major: 9, mig: &[], tdp_w: 400.0, class: DeviceClass::Datacenter },
    Gpu { id: "a30-24gb", name: "A30 24GB", capacity_bytes: 24576.0 * MIB, hbm_gbs: 933.0, host_gbs: 32.0, tflops: 165.0, link_gbs: 100.0, major: 8, mig: &[], tdp_w: 165.0, class: DeviceClass::Datacenter },
    Gpu { id: "a40-48gb", name: "A40 48GB", capacity_bytes: 46068.0 * MIB, hbm_gbs: 696.0, host_gbs: 32.0, tflops: 149.7, link_gbs: 56.25, major: 8, mig: &[], tdp_w: 300.0, class: DeviceClass::Datacenter },
    Gpu { id: "l40-48gb", name: "L40 48GB", capacity_bytes: 46068.0 * MIB, hbm_gbs: 864.0, host_gbs: 32.0, tflops: 181.0, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 300.0, class: DeviceClass::Datacenter },
    Gpu { id: "mi250x-gcd-64gb", name: "Instinct MI250X (one GCD, 64GB)", capacity_bytes: 64.0 * GIB, hbm_gbs: 1638.0, host_gbs: 32.0, tflops: 191.5, link_gbs: 100.0, major: 0, mig: &[], tdp_w: 280.0, class: DeviceClass::Datacenter },
    Gpu { id: "mi325x-256gb", name: "Instinct MI325X", capacity_bytes: 256.0 * GIB, hbm_gbs: 6000.0, host_gbs: 64.0, tflops: 1307.4, link_gbs: 448.0, major: 0, mig: &[], tdp_w: 1000.0, class: DeviceClass::Datacenter },
    // Workstation cards (RTX A6000 48 GB, 768 GB/s, 154.8 TFLOPS, NVLink bridge 112.5 GB/s;
    // RTX 6000 Ada 48 GB, 960 GB/s, 364.2 TFLOPS, no NVLink) and GeForce cards (Ada and
    // Ampere whitepapers: GeForce tensor cores run FP16/BF16 with FP32 accumulate at half
    // rate, 2× the FP32 shader TFLOPS: 4080 97.5, 4070 Ti 80.2, 4060 Ti 44.2, 3060 25.4;
    // the 4060 Ti has a PCIe 4.0 ×8 link).
    Gpu { id: "rtx-a6000-48gb", name: "RTX A6000 48GB", capacity_bytes: 49140.0 * MIB, hbm_gbs: 768.0, host_gbs: 32.0, tflops: 154.8, link_gbs: 56.25, major: 8, mig: &[], tdp_w: 300.0, class: DeviceClass::Consumer },
    Gpu { id: "rtx-6000-ada-48gb", name: "RTX 6000 Ada 48GB", capacity_bytes: 49140.0 * MIB, hbm_gbs: 960.0, host_gbs: 32.0, tflops: 364.2, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 300.0, class: DeviceClass::Consumer },
    Gpu { id: "rtx-4080-16gb", name: "GeForce RTX 4080", capacity_bytes: 16376.0 * MIB, hbm_gbs: 716.8, host_gbs: 32.0, tflops: 97.5, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 320.0, class: DeviceClass::Consumer },
    Gpu { id: "rtx-4070-ti-12gb", name: "GeForce RTX 4070 Ti", capacity_bytes: 12282.0 * MIB, hbm_gbs: 504.2, host_gbs: 32.0, tflops: 80.2, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 285.0, class: DeviceClass::Consumer },
    Gpu { id: "rtx-4060-ti-16gb", name: "GeForce RTX 4060 Ti 16GB", capacity_bytes: 16380.0 * MIB, hbm_gbs: 288.0, host_gbs: 16.0, tflops: 44.2, link_gbs: 16.0, major: 8, mig: &[], tdp_w: 165.0, class: DeviceClass::Consumer },
    Gpu { id: "rtx-3060-12gb", name: "GeForce RTX 3060 12GB", capacity_bytes: 12288.0 * MIB, hbm_gbs: 360.0, host_gbs: 32.0, tflops: 25.4, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 170.0, class: DeviceClass::Consumer },
    Gpu { id: "rtx-5090-32gb", name: "GeForce RTX 5090", capacity_bytes: 32607.0 * MIB, hbm_gbs: 1792.0, host_gbs: 64.0, tflops: 209.5, link_gbs: 64.0, major: 12, mig: &[], tdp_w: 575.0, class: DeviceClass::Consumer },
    Gpu { id: "rtx-4090-24gb", name: "GeForce RTX 4090", capacity_bytes: 24564.0 * MIB, hbm_gbs: 1008.0, host_gbs: 32.0, tflops: 165.2, link_gbs: 32.0, major: 8, mig: &[], tdp_w: 450.0, class: DeviceClass::Consumer },
    Gpu { id: "rtx-3090-24gb", name: "GeForce RTX 3090", capacity_bytes: 24576.0 * MIB, hbm_gbs: 936.0, host_gbs: 32.0, tflops: 71.0, link_gbs: 56.25, major: 8, mig: &[], tdp_w: 350.0, class: DeviceClass::Consumer },
    // GH200 (96 GB HBM3): the host link is NVLink-C2C, 900 GB/s total, 450 per direction
    // (NVIDIA Grace Hopper Superchip Architecture whitepaper, 2023; HBM3 4 TB/s, 989 dense BF16).
    // Capacity is the product figure, not a driver total — verify.
    Gpu { id: "gh200-96gb", name: "GH200 96GB", capacity_bytes: 96.0 * GIB, hbm_gbs: 4000.0, host_gbs: 450.0, tflops: 989.4, link_gbs: 450.0, major: 9, mig: &[], tdp_w: 1000.0, class: DeviceClass::Superchip },
    Gpu { id: "mi300x-192gb", name: "Instinct MI300X", capacity_bytes: 192.0 * GIB, hbm_gbs: 5300.0, host_gbs: 64.0, tflops: 1307.4, link_gbs: 448.0, major: 0, mig: &[], tdp_w: 750.0, class: DeviceClass::Datacenter },
];

fn full_device(g: &Gpu) -> Device {
    Device {
        id: g.id.to_string(),
        name: g.name.to_string(),
        capacity_bytes: g.capacity_bytes,
        hbm_bandwidth: g.hbm_gbs * GB,
        host_link_bandwidth: g.host_gbs * GB,
        bf16_tflops: g.tflops,
        interconnect_bandwidth: g.link_gbs * GB,
        compute_major: g.major,
        mig: false,
        class: g.class,
        gpus_per_node: DEFAULT_GPUS_PER_NODE,
        network_bandwidth: DEFAULT_NETWORK_BANDWIDTH,
        tdp_w: g.tdp_w,
    }
}

/// Share of its memory slices a MIG instance really reports: an A100-40GB 3g.20gb shows
/// 19,968 MiB of the 20,480 its four eighths would give (XuehaiPan/nvitop PR #8).
const MIG_CAPACITY_FACTOR: f64 = 19968.0 / 20480.0;

/// A MIG slice gets its share of the memory slices (capacity and bandwidth, eighths) and
/// of the compute slices (sevenths) — NVIDIA MIG user guide, "Supported profiles".
fn mig_slice(g: &Gpu, suffix: &str, compute: u32, memory: u32) -> Device {
    let mem = memory as f64 / 8.0;
    Device {
        id: format!("{}-mig-{suffix}", g.id),
        name: format!("{} MIG {suffix}", g.name),
        capacity_bytes: g.capacity_bytes * mem * MIG_CAPACITY_FACTOR,
        hbm_bandwidth: g.hbm_gbs * GB * mem,
        bf16_tflops: g.tflops * compute as f64 / 7.0,
        // A MIG instance has no NVLink or peer access: other GPUs are reached over PCIe.
        interconnect_bandwidth: g.host_gbs * GB,
        mig: true,
        tdp_w: g.tdp_w * compute as f64 / 7.0,
        ..full_device(g)
    }
}

impl Device {
    /// A neutral stand-in used only if the catalogue itself were empty.
    pub fn placeholder() -> Device {
        Device {
            id: "placeholder".into(),
            name: "Unknown device".into(),
            capacity_bytes: 80.0 * GIB,
            hbm_bandwidth: 2000.0 * GB,
            host_link_bandwidth: 32.0 * GB,
            bf16_tflops: 300.0,
            interconnect_bandwidth: 32.0 * GB,
            compute_major: 8,
            mig: false,
            class: DeviceClass::Datacenter,
            gpus_per_node: DEFAULT_GPUS_PER_NODE,
            network_bandwidth: DEFAULT_NETWORK_BANDWIDTH,
            tdp_w: 0.0,
        }
    }
}

/// Every device, full GPUs first, each followed by its MIG slices.
pub fn devices() -> Vec<Device> {
    let mut out = Vec::new();
    for g in GPUS {
        out.push(full_device(g));
        for &(suffix, c, m) in g.mig {
            out.push(mig_slice(g, suffix, c, m));
        }
    }
    out
}

/// The device with this id (full GPU or MIG slice).
pub fn device_preset(id: &str) -> Option<Device> {
    for g in GPUS {
        if g.id == id {
            return Some(full_device(g));
        }
        if let Some(suffix) = id.strip_prefix(g.id).and_then(|rest| rest.strip_prefix("-mig-")) {
            return g.mig.iter().find(|(s, _, _)| *s == suffix).map(|&(s, c, m)| mig_slice(g, s, c, m));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[rustfmt::skip] // the ids as a paragraph
    fn design_card_devices_exist() {
        for id in [
            "v100-32gb", "t4-16gb", "a10g-24gb", "l4-24gb", "l40s-48gb", "a100-40gb", "a100-80gb", "h100-pcie-80gb",
            "h100-sxm-80gb", "h200-141gb", "b200-192gb", "rtx-3090-24gb", "rtx-4090-24gb", "rtx-5090-32gb",
            "mi300x-192gb", "a100-80gb-mig-3g.40gb", "h100-sxm-80gb-mig-1g.10gb",
            // issue 11's list
            "rtx-a6000-48gb", "rtx-6000-ada-48gb", "a40-48gb", "rtx-4080-16gb", "rtx-4070-ti-12gb",
            "rtx-4060-ti-16gb", "rtx-3060-12gb", "h20-96gb", "gh200-96gb", "mi250x-gcd-64gb", "mi325x-256gb",
        ] {
            assert!(device_preset(id).is_some(), "missing device {id}");
        }
    }

    #[test]
    fn catalogue_has_thirty_gpus_with_unique_ids() {
        let all = devices();
        let full: Vec<_> = all.iter().filter(|d| !d.mig).collect();
        assert!(full.len() >= 30, "{} full GPUs", full.len());
        let mut ids: Vec<_> = all.iter().map(|d| d.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len(), "duplicate device ids");
    }

    #[test]
    fn every_full_gpu_has_a_tdp() {
        for d in devices() {
            assert!(d.tdp_w >= 70.0 && d.tdp_w <= 1000.0 || d.mig, "{} TDP {}", d.id, d.tdp_w);
        }
        assert_eq!(device_preset("h100-pcie-80gb").unwrap().tdp_w, 350.0);
        assert_eq!(device_preset("a100-80gb-mig-3g.40gb").unwrap().tdp_w, 400.0 * 3.0 / 7.0);
    }

    #[test]
    fn mig_slice_gets_its_memory_share() {
        let full = device_preset("a100-80gb").unwrap();
        let slice = device_preset("a100-80gb-mig-3g.40gb").unwrap();
        assert_eq!(slice.capacity_bytes, full.capacity_bytes / 2.0 * MIG_CAPACITY_FACTOR);
        assert!(device_preset("a100-80gb-mig-9g.99gb").is_none());
    }
}
