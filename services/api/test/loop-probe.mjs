/**
 * Loaded into a service process a test starts (`node --import ./test/loop-probe.mjs …`, with an IPC
 * channel): its main thread's event-loop delay (monitorEventLoopDelay: how late a 5 ms timer
 * fired), the most CPU time the thread itself spent between two such ticks (its own work
 * holding the loop: what a busy host's scheduler adds to the delay is not in it), its CPU
 * time in all, and its garbage collections' time (in all, longest). The message 'loop' answers them since the previous 'loop' and starts again.
 */
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
let heldMs = 0;
let cpuMs = 0;
let last = process.threadCpuUsage();
const tick = () => {
  const now = process.threadCpuUsage();
  const ms = (now.user - last.user + now.system - last.system) / 1000;
  heldMs = Math.max(heldMs, ms);
  cpuMs += ms;
  last = now;
};
setInterval(tick, 5).unref();
// The thread's garbage collections: their time in all and the longest.
let gcMs = 0;
let gcMaxMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcMaxMs = Math.max(gcMaxMs, e.duration);
  }
}).observe({ entryTypes: ['gc'] });
process.on('message', (m) => {
  if (m !== 'loop') return;
  tick();
  process.send({ delayMaxMs: delay.max / 1e6, delayP99Ms: delay.percentile(99) / 1e6, heldMaxMs: heldMs, cpuMs, gcMs, gcMaxMs });
  delay.reset();
  heldMs = 0;
  cpuMs = 0;
  gcMs = 0;
  gcMaxMs = 0;
});
// The channel alone does not keep the service running; its end (the test's process gone, say, a
// test that started the service in a session of its own) ends the service as SIGTERM does.
process.channel?.unref();
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
