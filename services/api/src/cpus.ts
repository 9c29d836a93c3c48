import fs from 'node:fs';
import os from 'node:os';

/**
 * CPUs this process may use: the container's CPU limit (cgroup v2 `cpu.max`, or v1's CFS quota),
 * rounded up, and never more than the cores Node sees. `os.availableParallelism()` alone counts
 * the host's cores, which in a container limited to one CPU would start a thread per host core.
 */
export function availableCpus(read: (file: string) => string | undefined = readFile, cores = os.availableParallelism()): number {
  let limit = Number.POSITIVE_INFINITY;
  const v2 = read('/sys/fs/cgroup/cpu.max')?.trim().split(/\s+/);
  if (v2 && v2[0] !== 'max' && Number(v2[0]) > 0 && Number(v2[1]) > 0) limit = Number(v2[0]) / Number(v2[1]);
  else {
    const quota = Number(read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')?.trim());
    const period = Number(read('/sys/fs/cgroup/cpu/cpu.cfs_period_us')?.trim());
    if (quota > 0 && period > 0) limit = quota / period;
  }
  return Math.max(1, Math.min(cores, Math.ceil(limit)));
}

function readFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
