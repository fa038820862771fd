// Schema version 4: the PCIe link of each device (from NVML at record time).
//
// The what-if replay estimates a pageable copy as if it were pinned; with no
// pinned copy in the recording to measure, the link's bandwidth is the
// reference (profiler/analysis/bandwidth.ts). The maximum generation and
// width are stored: an idle link trains down, so the current ones say little.
// NULL: unknown (no NVML, recordings of earlier versions, imported traces).
export const version = 4;

export const sql = /* sql */ `
ALTER TABLE devices ADD COLUMN pcie_generation INTEGER;
ALTER TABLE devices ADD COLUMN pcie_width INTEGER;
`;
