/**
 * `npm run bundle` (the last step of `npm run build`; `-- --outdir=<dir>` writes elsewhere): the
 * esbuild bundle of the two entry points into `dist/`, self-contained (every runtime dependency
 * inlined; pino-pretty, Development only, left out), plus `dist/THIRD-PARTY-NOTICES.txt`. The
 * bundle inlines code of MIT, ISC, BSD and Apache-2.0 packages (Fastify, openid-client, pino,
 * the security core...), whose licenses ask that their notices go with every copy: the file holds,
 * for each package that contributes bytes to the output, its name, version, license and its own
 * license text, and travels with `dist/` into the production directory and the image.
 */
import { build, type Metafile } from 'esbuild'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { CONTENT_ROOT } from './content-root.js'

const NOTICES_FILE = 'THIRD-PARTY-NOTICES.txt'
const TELEMETRY_SDK = [
  '@opentelemetry/sdk-metrics', '@opentelemetry/resources', '@opentelemetry/exporter-prometheus',
  '@opentelemetry/exporter-metrics-otlp-http', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http', '@fastify/otel'
]
const LICENSE_FILE = /^(licen[sc]e|copying|notice)(\.(md|txt|markdown))?$/i

interface PackageFacts { readonly name: string, readonly version: string, readonly license: string, readonly texts: readonly string[] }

function packageOf (directory: string, cache: Map<string, PackageFacts | undefined>): PackageFacts | undefined {
  if (cache.has(directory)) return cache.get(directory)
  let facts: PackageFacts | undefined
  const manifestFile = join(directory, 'package.json')
  const manifest = existsSync(manifestFile) ? JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, unknown> : undefined
  if (manifest !== undefined && typeof manifest.name === 'string' && typeof manifest.version === 'string') {
    const license = typeof manifest.license === 'string' ? manifest.license : 'see the package'
    const texts = readdirSync(directory).filter((file) => LICENSE_FILE.test(file)).sort().map((file) => readFileSync(join(directory, file), 'utf8').trim())
    facts = { name: manifest.name, version: manifest.version, license, texts }
  } else if (dirname(directory) !== directory) {
    facts = packageOf(dirname(directory), cache)
  }
  cache.set(directory, facts)
  return facts
}

/** The notices of every package (other than this app) whose code is in the bundle's output. */
function thirdPartyNotices (metafile: Metafile, workingDirectory: string, appName: string): string {
  const cache = new Map<string, PackageFacts | undefined>()
  const packages = new Map<string, PackageFacts>()
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (bytesInOutput === 0) continue
      const facts = packageOf(dirname(resolve(workingDirectory, input)), cache)
      if (facts !== undefined && facts.name !== appName) packages.set(`${facts.name}@${facts.version}`, facts)
    }
  }
  const sections = [...packages.values()].sort((a, b) => a.name.localeCompare(b.name)).map((facts) =>
    `${facts.name} ${facts.version} (${facts.license})\n\n${facts.texts.length > 0 ? facts.texts.join('\n\n') : `No license file in the package; its package.json says ${facts.license}.`}`)
  return `Third-party software in this bundle (dist/)\n\nThe bundle contains code from the ${packages.size} packages below; each notice is the package's own.\n\n` +
    sections.map((section) => `${'='.repeat(80)}\n${section}\n`).join('\n')
}

async function main (args: readonly string[]): Promise<void> {
  const unknown = args.filter((arg) => !arg.startsWith('--outdir='))
  if (unknown.length > 0) {
    process.stderr.write(`bundle: unknown argument ${unknown[0] ?? ''}\nUsage: npm run bundle [-- --outdir=<directory>]\n`)
    process.exitCode = 2
    return
  }
  const outdir = resolve(args.findLast((arg) => arg.startsWith('--outdir='))?.slice('--outdir='.length) ?? join(CONTENT_ROOT, 'dist'))
  const result = await build({
    absWorkingDir: CONTENT_ROOT,
    entryPoints: ['src/server.ts', 'src/check-config.ts'],
    bundle: true,
    platform: 'node',
    format: 'esm',
    splitting: true,
    target: 'node20.19',
    // pino-pretty is Development only; the OpenTelemetry SDK is loaded only when Telemetry is
    // switched on (docs/deployment.md says how to ship it then), so it adds nothing until then.
    external: ['pino-pretty', ...TELEMETRY_SDK],
    outdir,
    sourcemap: true,
    logLevel: 'warning',
    metafile: true,
    banner: { js: "import{createRequire as __bundleCreateRequire}from'node:module';const require=__bundleCreateRequire(import.meta.url);" }
  })
  const appName = (JSON.parse(readFileSync(join(CONTENT_ROOT, 'package.json'), 'utf8')) as { name: string }).name
  writeFileSync(join(outdir, NOTICES_FILE), thirdPartyNotices(result.metafile, CONTENT_ROOT, appName))
}

await main(process.argv.slice(2))
