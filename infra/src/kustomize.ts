/**
 * The part of `kustomize build` this repository's kustomizations use: resources (files and
 * directories), namespace, images and labels. Any other field fails the build, so the tests never
 * check something other than what `kubectl apply -k` would apply.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects are checked by kubernetes-models, not by this type
export type Resource = Record<string, any>;

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'labels']);
const WITH_POD_TEMPLATE = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

interface ImageRule {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

interface LabelRule {
  pairs: Record<string, string>;
  includeSelectors?: boolean;
  includeTemplates?: boolean;
}

/** Every document of a YAML file, parsed. */
export function readYamlDocuments(file: string): Resource[] {
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'));
  const out: Resource[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) out.push(value as Resource);
  }
  return out;
}

/** The pod specs inside a workload (Deployment, Job, ... and CronJob's job template). */
export function podSpecs(resource: Resource): Resource[] {
  if (WITH_POD_TEMPLATE.has(resource.kind)) return [resource.spec?.template?.spec].filter(Boolean);
  if (resource.kind === 'CronJob') return [resource.spec?.jobTemplate?.spec?.template?.spec].filter(Boolean);
  if (resource.kind === 'Pod') return [resource.spec].filter(Boolean);
  return [];
}

function podTemplateMetadata(resource: Resource): Resource | undefined {
  if (!WITH_POD_TEMPLATE.has(resource.kind)) return undefined;
  resource.spec.template.metadata ??= {};
  return resource.spec.template.metadata;
}

/** Splits `registry/name:tag@sha256:...` into name, tag and digest. */
export function parseImage(image: string): { name: string; tag?: string; digest?: string } {
  let rest = image;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const colon = rest.lastIndexOf(':');
  const tag = colon > rest.lastIndexOf('/') ? rest.slice(colon + 1) : undefined;
  const name = tag === undefined ? rest : rest.slice(0, colon);
  return { name, tag, digest };
}

function applyImages(resources: Resource[], rules: ImageRule[]): void {
  for (const resource of resources) {
    for (const spec of podSpecs(resource)) {
      for (const container of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
        const current = parseImage(container.image);
        const rule = rules.find((r) => r.name === current.name);
        if (!rule) continue;
        const name = rule.newName ?? current.name;
        const digest = rule.digest ?? (rule.newTag ? undefined : current.digest);
        const tag = rule.digest ? undefined : (rule.newTag ?? current.tag);
        container.image = `${name}${tag ? `:${tag}` : ''}${digest ? `@${digest}` : ''}`;
      }
    }
  }
}

function applyLabels(resources: Resource[], rules: LabelRule[]): void {
  for (const rule of rules) {
    for (const resource of resources) {
      resource.metadata.labels = { ...resource.metadata.labels, ...rule.pairs };
      if (rule.includeTemplates || rule.includeSelectors) {
        const meta = podTemplateMetadata(resource);
        if (meta) meta.labels = { ...meta.labels, ...rule.pairs };
      }
      if (rule.includeSelectors) throw new Error('labels with includeSelectors are not supported here (selectors are immutable; keep them explicit)');
    }
  }
}

/** `kustomize build dir` for the supported fields. */
export function kustomizeBuild(dir: string): Resource[] {
  const file = path.join(dir, 'kustomization.yaml');
  const [k] = readYamlDocuments(file);
  if (!k) throw new Error(`${file} is empty`);
  for (const key of Object.keys(k)) if (!SUPPORTED.has(key)) throw new Error(`${file}: field ${key} is not supported by this build`);
  if (k.kind !== 'Kustomization') throw new Error(`${file}: kind must be Kustomization`);
  const resources: Resource[] = [];
  for (const entry of (k.resources ?? []) as string[]) {
    const target = path.resolve(dir, entry);
    if (fs.statSync(target).isDirectory()) resources.push(...kustomizeBuild(target));
    else resources.push(...readYamlDocuments(target));
  }
  for (const r of resources) r.metadata ??= {};
  applyLabels(resources, (k.labels ?? []) as LabelRule[]);
  applyImages(resources, (k.images ?? []) as ImageRule[]);
  if (k.namespace) for (const r of resources) r.metadata.namespace = k.namespace;
  const seen = new Set<string>();
  for (const r of resources) {
    const id = `${r.apiVersion}/${r.kind}/${r.metadata.namespace ?? ''}/${r.metadata.name}`;
    if (seen.has(id)) throw new Error(`${dir}: ${id} is defined twice`);
    seen.add(id);
  }
  return resources;
}
