import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { kustomizeBuild, parseImage, podSpecs, type Resource, readYamlDocuments } from '../src/kustomize.js';

const K8S = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'kubernetes');
const BASE = path.join(K8S, 'base');
const OVERLAY = path.join(K8S, 'overlays', 'example');

/** The classes of every kind the manifests use; .validate() checks against the Kubernetes OpenAPI schema. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

function validate(resource: Resource): void {
  const Model = MODELS[`${resource.apiVersion}/${resource.kind}`];
  if (!Model) throw new Error(`no schema for ${resource.apiVersion} ${resource.kind}`);
  try {
    new Model(structuredClone(resource) as never).validate();
  } catch (err) {
    throw new Error(`${resource.kind}/${resource.metadata?.name} does not validate: ${(err as Error).message}`);
  }
}

function one(resources: Resource[], kind: string): Resource {
  const found = resources.filter((r) => r.kind === kind);
  expect(found, `exactly one ${kind}`).to.have.length(1);
  return found[0]!;
}

/** A selector's labels all present in a pod's labels. */
function selects(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** Kubernetes quantity in bytes (memory) or cores (cpu). */
function quantity(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(q));
  if (!m) throw new Error(`not a quantity: ${q}`);
  const units: Record<string, number> = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * (m[2] ? units[m[2]]! : 1);
}

function envValue(container: Resource, name: string): string | undefined {
  return container.env?.find((e: Resource) => e.name === name)?.value;
}

function checkSecurity(pod: Resource, container: Resource): void {
  const podCtx = pod.securityContext ?? {};
  const ctx = container.securityContext ?? {};
  expect(ctx.runAsNonRoot ?? podCtx.runAsNonRoot, 'runAsNonRoot').to.equal(true);
  expect(ctx.runAsUser ?? podCtx.runAsUser, 'runAsUser').to.equal(10001);
  expect(ctx.readOnlyRootFilesystem, 'readOnlyRootFilesystem').to.equal(true);
  expect(ctx.allowPrivilegeEscalation, 'allowPrivilegeEscalation').to.equal(false);
  expect(ctx.privileged ?? false, 'privileged').to.equal(false);
  expect(ctx.capabilities?.drop, 'capabilities.drop').to.deep.equal(['ALL']);
  expect(ctx.capabilities?.add ?? [], 'capabilities.add').to.deep.equal([]);
  expect((ctx.seccompProfile ?? podCtx.seccompProfile)?.type, 'seccompProfile').to.equal('RuntimeDefault');
  const tmp = container.volumeMounts?.find((m: Resource) => m.mountPath === '/tmp');
  expect(tmp, 'a writable /tmp').to.not.equal(undefined);
  const volume = pod.volumes?.find((v: Resource) => v.name === tmp.name);
  expect(volume?.emptyDir, '/tmp is an emptyDir').to.not.equal(undefined);
  expect(pod.automountServiceAccountToken, 'no service account token').to.equal(false);
}

for (const [label, dir] of [
  ['base', BASE],
  ['overlays/example', OVERLAY],
] as const) {
  describe(`kubernetes/${label} (kustomize build)`, () => {
    const resources = kustomizeBuild(dir);
    const deployment = one(resources, 'Deployment');
    const pod = deployment.spec.template.spec;
    const podLabels: Record<string, string> = deployment.spec.template.metadata.labels;
    const container = pod.containers.find((c: Resource) => c.name === 'api');
    const job = one(resources, 'Job');
    const jobPodLabels: Record<string, string> = job.spec.template.metadata.labels;

    it('builds the expected resources, each valid against the Kubernetes schema', () => {
      expect(resources.map((r) => r.kind).sort()).to.deep.equal(
        ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Job', 'NetworkPolicy', 'PodDisruptionBudget', 'Service'].sort(),
      );
      for (const r of resources) validate(r);
    });

    it('puts the kustomization labels on every resource and pod template, not on selectors', () => {
      for (const r of resources) expect(r.metadata.labels?.['app.kubernetes.io/part-of'], `${r.kind} labels`).to.equal('meal-planner');
      expect(podLabels['app.kubernetes.io/part-of']).to.equal('meal-planner');
      expect(deployment.spec.selector.matchLabels).to.not.have.property('app.kubernetes.io/part-of');
    });

    it('runs a pinned image, never :latest, the same in the Deployment and the migration Job', () => {
      for (const r of resources) {
        for (const spec of podSpecs(r)) {
          for (const c of spec.containers) {
            const image = parseImage(c.image);
            expect(image.tag ?? image.digest, `${c.image} has a tag or digest`).to.be.a('string');
            expect(image.tag, `${c.image}`).to.not.equal('latest');
          }
        }
      }
      expect(job.spec.template.spec.containers[0].image).to.equal(container.image);
      if (label === 'overlays/example') expect(container.image).to.equal('registry.example.com/meal-planner/api:0.1.0');
      else expect(container.image).to.equal('meal-planner-api:0.1.0');
    });

    it('probes: startup and liveness on /healthz, readiness on /readyz, all on the HTTP container port', () => {
      const http = container.ports.find((p: Resource) => p.containerPort === 8080);
      expect(http, 'container port 8080').to.not.equal(undefined);
      const probes = { startupProbe: '/healthz', readinessProbe: '/readyz', livenessProbe: '/healthz' } as const;
      for (const [probe, route] of Object.entries(probes)) {
        const get = container[probe]?.httpGet;
        expect(get?.path, `${probe} path`).to.equal(route);
        expect([http.name, 8080], `${probe} port`).to.include(get.port);
      }
    });

    it('gives start-up (migration lock wait) minutes and a database blip half a minute before readiness fails', () => {
      const { startupProbe, readinessProbe, livenessProbe } = container;
      expect(startupProbe.periodSeconds * startupProbe.failureThreshold, 'start-up allowance, s').to.be.at.least(180);
      // A blip shorter than this keeps every pod in the Service, answering its own 503 problem.
      expect(readinessProbe.periodSeconds * readinessProbe.failureThreshold, 'readiness tolerance, s').to.be.at.least(15);
      expect(livenessProbe.periodSeconds * livenessProbe.failureThreshold, 'liveness tolerance, s').to.be.at.least(20);
    });

    it('lets the drain and the in-flight cap finish inside terminationGracePeriodSeconds, with a margin', () => {
      const drain = Number(envValue(container, 'SHUTDOWN_DRAIN_SECONDS'));
      const cap = Number(envValue(container, 'SHUTDOWN_TIMEOUT_SECONDS'));
      expect(drain, 'SHUTDOWN_DRAIN_SECONDS').to.equal(10);
      expect(cap, 'SHUTDOWN_TIMEOUT_SECONDS').to.equal(20);
      // A preStop hook runs before SIGTERM, inside the same grace period; there is none (the
      // service drains itself), and a sleep there would have to be counted.
      expect(container.lifecycle?.preStop, 'no preStop hook').to.equal(undefined);
      const margin = 10;
      expect(drain + cap + margin, 'drain + cap + margin').to.be.below(pod.terminationGracePeriodSeconds);
    });

    it('requests 250m CPU and 192Mi, limits memory to at least 256Mi (benchmark RSS <= 200 MB)', () => {
      const { requests, limits } = container.resources;
      expect(quantity(requests.cpu)).to.equal(0.25);
      expect(quantity(requests.memory)).to.equal(192 * 2 ** 20);
      expect(quantity(limits.memory)).to.be.at.least(256 * 2 ** 20);
      expect(quantity(limits.memory)).to.be.at.least(quantity(requests.memory));
    });

    it('runs as user 10001 without privileges on a read-only root, with an emptyDir /tmp (API and migration Job)', () => {
      checkSecurity(pod, container);
      checkSecurity(job.spec.template.spec, job.spec.template.spec.containers[0]);
    });

    it('takes the connection strings and the session secret from the Secret, the rest from the ConfigMap', () => {
      for (const name of ['DATABASE_URL', 'SESSION_SECRET', 'REDIS_URL', 'SMTP_URL']) {
        const e = container.env.find((x: Resource) => x.name === name);
        expect(e?.valueFrom?.secretKeyRef, `${name} from a Secret`).to.include({ name: 'meal-planner-secrets', key: name });
        expect(e.valueFrom.secretKeyRef.optional ?? false, `${name} required`).to.equal(false);
      }
      const configMap = one(resources, 'ConfigMap');
      expect(container.envFrom.map((e: Resource) => e.configMapRef?.name)).to.include(configMap.metadata.name);
      for (const key of ['TRUST_PROXY', 'PUBLIC_BASE_URL', 'LOG_LEVEL', 'NODE_ENV']) expect(configMap.data, 'ConfigMap').to.have.property(key);
      const secrets = ['DATABASE_URL', 'SESSION_SECRET', 'REDIS_URL', 'SMTP_URL', 'GOOGLE_CLIENT_SECRET', 'APPLE_PRIVATE_KEY'];
      for (const key of Object.keys(configMap.data)) expect(secrets, 'no secret in the ConfigMap').to.not.include(key);
      const secretExample = readYamlDocuments(path.join(BASE, 'secret.example.yaml'));
      expect(secretExample).to.have.length(1);
      validate(secretExample[0]!);
      const required = container.env.filter((e: Resource) => e.valueFrom?.secretKeyRef && !e.valueFrom.secretKeyRef.optional);
      for (const e of required) expect(secretExample[0]!.stringData, 'secret.example.yaml keys').to.have.property(e.valueFrom.secretKeyRef.key);
    });

    it('serves metrics on METRICS_PORT 9464, announced to Prometheus and not exposed by the Service', () => {
      expect(envValue(container, 'METRICS_PORT')).to.equal('9464');
      expect(container.ports.map((p: Resource) => p.containerPort)).to.include(9464);
      const annotations = deployment.spec.template.metadata.annotations;
      expect(annotations['prometheus.io/scrape']).to.equal('true');
      expect(annotations['prometheus.io/port']).to.equal('9464');
      const service = one(resources, 'Service');
      const named = Object.fromEntries(container.ports.map((p: Resource) => [p.name, p.containerPort]));
      for (const p of service.spec.ports) expect(named[p.targetPort] ?? p.targetPort, 'Service target port').to.equal(8080);
    });

    it('selects the Deployment pods (and never the migration pods) from the Service, the PDB and the HPA', () => {
      expect(selects(deployment.spec.selector.matchLabels, podLabels), 'Deployment selector').to.equal(true);
      const service = one(resources, 'Service');
      expect(selects(service.spec.selector, podLabels), 'Service selector').to.equal(true);
      expect(selects(service.spec.selector, jobPodLabels), 'Service must not route to the migration pod').to.equal(false);
      const pdb = one(resources, 'PodDisruptionBudget');
      expect(selects(pdb.spec.selector.matchLabels, podLabels), 'PDB selector').to.equal(true);
      expect(selects(pdb.spec.selector.matchLabels, jobPodLabels), 'PDB not on the Job').to.equal(false);
      expect(pdb.spec.maxUnavailable ?? pdb.spec.minAvailable).to.equal(1);
      const hpa = one(resources, 'HorizontalPodAutoscaler');
      expect(hpa.spec.scaleTargetRef).to.deep.equal({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
      expect([hpa.spec.minReplicas, hpa.spec.maxReplicas]).to.deep.equal([2, 10]);
      expect(hpa.spec.metrics[0].resource).to.deep.equal({ name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } });
      expect(deployment.spec.replicas, 'replicas left to the HPA').to.equal(undefined);
    });

    it('runs the migrations in a Job with the service image and the migrate entry point', () => {
      const c = job.spec.template.spec.containers[0];
      expect([...(c.command ?? []), ...(c.args ?? [])]).to.deep.equal(['node', 'services/api/dist/src/migrate.js']);
      expect(job.spec.template.spec.restartPolicy).to.equal('Never');
      expect(c.env.find((e: Resource) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef.name).to.equal('meal-planner-secrets');
    });

    it('lets traffic in only from the ingress controller (8080) and Prometheus (9464), and out only to what the service uses', () => {
      const policy = one(resources, 'NetworkPolicy');
      expect(policy.spec.policyTypes).to.have.members(['Ingress', 'Egress']);
      expect(selects(policy.spec.podSelector.matchLabels, podLabels), 'covers the API pods').to.equal(true);
      expect(selects(policy.spec.podSelector.matchLabels, jobPodLabels), 'covers the migration pods').to.equal(true);
      const ingress = policy.spec.ingress.map((rule: Resource) => ({
        from: rule.from.map((f: Resource) => f.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']),
        ports: rule.ports.map((p: Resource) => p.port),
      }));
      expect(ingress).to.deep.equal([
        { from: ['ingress-nginx'], ports: [8080] },
        { from: ['monitoring'], ports: [9464] },
      ]);
      const egress = policy.spec.egress.flatMap((rule: Resource) => rule.ports.map((p: Resource) => `${p.protocol}/${p.port}`));
      expect(egress).to.have.members(['UDP/53', 'TCP/53', 'TCP/5432', 'TCP/6379', 'TCP/587', 'TCP/25', 'TCP/443']);
    });

    if (label === 'overlays/example') {
      it('puts every resource in the overlay namespace', () => {
        for (const r of resources) expect(r.metadata.namespace, `${r.kind}`).to.equal('meal-planner');
      });
    }
  });
}
