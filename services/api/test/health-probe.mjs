/**
 * A /healthz prober in a process of its own, started by a test with an IPC channel and the
 * service's port as its argument. On 'start' it asks GET /healthz one request after another (each
 * over a connection of its own, 10 ms apart); on 'stop' it lets the request in flight finish and
 * answers `{ ms, failures }`: each answer's wall-clock time and what was not a 200. Its event loop
 * does nothing else, so the times are the service's (and the host's scheduler's), not those of a
 * test process that is busy with the load it measures.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const port = Number(process.argv[2]);
let probing = false;
let ms = [];
let failures = [];
let onIdle;

function probe() {
  if (!probing) {
    onIdle?.();
    return;
  }
  const started = performance.now();
  const next = () => setTimeout(probe, 10);
  const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
    res.resume();
    res.on('end', () => {
      if (res.statusCode === 200) ms.push(performance.now() - started);
      else failures.push(`status ${res.statusCode}`);
      next();
    });
  });
  req.on('error', (err) => {
    failures.push(err.message);
    next();
  });
}

process.on('message', (m) => {
  if (m === 'start' && !probing) {
    ms = [];
    failures = [];
    probing = true;
    probe();
  } else if (m === 'stop' && probing) {
    onIdle = () => {
      onIdle = undefined;
      process.send({ ms, failures });
    };
    probing = false;
  }
});
// Ends with its channel (the test's process gone), or when killed.
process.on('disconnect', () => process.exit(0));
