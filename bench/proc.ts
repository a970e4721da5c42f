// Processes as /proc (Linux) shows them: CPU time, per-process peak RSS, and the physical footprint of several
// processes together. Summing RSS counts every page two processes share (above all the node binary itself, ~40 MB
// resident in each Node process) once per process; the footprint counts each physical page once.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";

const PAGE = 4096;

/** CPU time (user + system) a process has used so far, in ms; 0 when unreadable. */
export function cpuMs(pid: number): number {
  try {
    // Fields after the command name (which may contain spaces): state is [0], utime [11], stime [12], in clock ticks.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * CPU time all threads of a process have spent running so far, in ms with ns resolution (the sum of
 * /proc/<pid>/task/<tid>/schedstat): fine enough for one request, where {@link cpuMs} counts 10 ms ticks.
 */
export function threadsCpuMs(pid: number): number {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    return 0;
  }
  return ns / 1e6;
}

function statusMb(pid: number, field: "VmHWM" | "VmRSS"): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match?.[1] ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Peak resident memory (VmHWM) of a process, in MB; 0 when unreadable. */
export function peakRssMb(pid: number): number {
  return statusMb(pid, "VmHWM");
}

/** Current resident memory (VmRSS) of a process, in MB; 0 when unreadable. */
export function rssMb(pid: number): number {
  return statusMb(pid, "VmRSS");
}

/** The process and all its descendants. */
export function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    // gone
  }
  return [pid, ...children.flatMap(processTree)];
}

/** Address ranges of a process that have resident pages (from smaps, so untouched reservations are skipped). */
function residentRanges(pid: number): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let current: [number, number] | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range?.[1] && range[2]) {
      current = [Number.parseInt(range[1], 16), Number.parseInt(range[2], 16)];
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && current && Number(rss[1]) > 0) ranges.push(current);
  }
  return ranges;
}

/**
 * An upper estimate of the joint footprint of `pids` at their peaks: the footprint now plus what each process has
 * given back since its own peak (VmHWM − VmRSS; memory a process grows and releases is its own, not shared).
 */
export function peakFootprintMb(pids: readonly number[]): number | undefined {
  const now = footprintMb(pids);
  if (now === undefined) return undefined;
  return now + pids.reduce((sum, pid) => sum + Math.max(0, peakRssMb(pid) - rssMb(pid)), 0);
}

/**
 * Physical memory used by `pids` together, in MB: the distinct resident page frames of all of them (from
 * /proc/<pid>/pagemap). Undefined when frame numbers are hidden (they are only shown to root).
 */
export function footprintMb(pids: readonly number[]): number | undefined {
  const frames = new Set<bigint>();
  for (const pid of pids) {
    let fd: number;
    try {
      fd = openSync(`/proc/${pid}/pagemap`, "r");
    } catch {
      continue;
    }
    try {
      for (const [start, end] of residentRanges(pid)) {
        const entries = (end - start) / PAGE;
        const buffer = Buffer.alloc(entries * 8);
        readSync(fd, buffer, 0, buffer.length, (start / PAGE) * 8);
        for (let i = 0; i < entries; i++) {
          const entry = buffer.readBigUInt64LE(i * 8);
          if (!(entry >> 63n)) continue; // not present
          const frame = entry & ((1n << 55n) - 1n);
          if (frame === 0n) return undefined; // frame numbers hidden: not root
          frames.add(frame);
        }
      }
    } catch {
      // the process ended meanwhile: count what was read
    } finally {
      closeSync(fd);
    }
  }
  return (frames.size * PAGE) / (1024 * 1024);
}

/** What {@link watchTree} saw of a process tree. */
export interface TreeWatch {
  /** Highest sum of the tree's current RSS at one sample, in MB. */
  peakTreeRssMb: number;
  /** Most processes in the tree at one sample. */
  peakProcesses: number;
  /** Sum over every process seen of its own peak RSS (VmHWM, last read while it lived), in MB. */
  summedPeakRssMb: number;
}

/**
 * Samples the tree under `pid` every `intervalMs` (sum of VmRSS, process count, each process's VmHWM) until the
 * returned function is called; that function takes one last sample and returns what was seen.
 */
export function watchTree(pid: number, intervalMs = 25): () => TreeWatch {
  let peakTreeRssMb = 0;
  let peakProcesses = 0;
  const hwm = new Map<number, number>();
  const sample = () => {
    const pids = processTree(pid).filter((p) => rssMb(p) > 0);
    let sum = 0;
    for (const p of pids) {
      sum += rssMb(p);
      const peak = peakRssMb(p);
      if (peak > 0) hwm.set(p, peak);
    }
    peakTreeRssMb = Math.max(peakTreeRssMb, sum);
    peakProcesses = Math.max(peakProcesses, pids.length);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return () => {
    sample();
    clearInterval(timer);
    return { peakTreeRssMb, peakProcesses, summedPeakRssMb: [...hwm.values()].reduce((a, b) => a + b, 0) };
  };
}
