/**
 * A real nginx (Debian's package, installed by scripts/install-test-dependencies.sh) running the
 * shipped proxy configuration: the text the generator writes to deploy/nginx.conf (read from the
 * generated project's deploy/nginx.conf, or in the monorepo the generator's real file
 * packages/create-project-template/files/deploy/nginx.conf, which has no placeholders), with only
 * the instance addresses, the listen ports and the certificate directory moved to loopback and a
 * temporary directory. A self-signed certificate for 127.0.0.1 (openssl), its own prefix, pid,
 * logs and temporary paths, nothing on a privileged port. Bounded waits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { APP_ROOT, CORE_ROOT } from './app.js'

export const NGINX = process.env.NGINX ?? '/usr/sbin/nginx'

/** The proxy configuration as shipped: deploy/nginx.conf of a generated project, else the generator's files/deploy/nginx.conf. */
export async function shippedNginxConf (): Promise<string> {
  const generated = join(APP_ROOT, 'deploy', 'nginx.conf')
  if (existsSync(generated)) return readFileSync(generated, 'utf8')
  const text = readFileSync(join(CORE_ROOT, '..', 'create-project-template', 'files', 'deploy', 'nginx.conf'), 'utf8')
  // The generator copies this file as it is; a placeholder here would reach nginx unreplaced.
  if (/\{\{/.test(text)) throw new Error('files/deploy/nginx.conf has a placeholder; render it as the generator does')
  return text
}

export interface NginxPlacement {
  /** Loopback ports of the app instances, in the order of the shipped upstream block. */
  readonly upstreamPorts: readonly number[]
  readonly httpPort: number
  readonly httpsPort: number
  readonly certificates: string
}

/** Replaces `pattern` exactly `count` times, so a changed shipped file fails here rather than silently. */
function replaceExactly (text: string, pattern: RegExp, count: number, replacement: (index: number) => string): string {
  let index = 0
  const result = text.replace(pattern, () => replacement(index++))
  if (index !== count) throw new Error(`expected ${count} match(es) of ${String(pattern)} in the shipped nginx.conf, found ${index}`)
  return result
}

/** The shipped text with addresses, ports and certificate directory moved; nothing else changes. */
export function placeNginxConf (shipped: string, placement: NginxPlacement): string {
  let text = replaceExactly(shipped, /^ {4}server app\d:\d+(?=[ ;])/gm, placement.upstreamPorts.length, (index) => `    server 127.0.0.1:${placement.upstreamPorts[index] ?? 0}`)
  text = replaceExactly(text, /^ {4}listen 80;$/gm, 1, () => `    listen 127.0.0.1:${placement.httpPort};`)
  text = replaceExactly(text, /^ {4}listen 443 ssl/gm, 1, () => `    listen 127.0.0.1:${placement.httpsPort} ssl`)
  text = replaceExactly(text, /https:\/\/\$host:8443\$request_uri/g, 1, () => `https://$host:${placement.httpsPort}$request_uri`)
  text = replaceExactly(text, /\/etc\/nginx\/certs\//g, 2, () => `${placement.certificates}/`)
  return text
}

export class Nginx {
  readonly directory = mkdtempSync(join(tmpdir(), 'pt-nginx-'))
  readonly certificates = join(this.directory, 'certs')
  #process: ChildProcess | undefined
  #output = ''

  constructor () {
    // Workers run as nobody when the tests run as root: they must be able to reach their temp paths.
    chmodSync(this.directory, 0o711)
    mkdirSync(this.certificates, { mode: 0o700 })
    const result = spawnSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(this.certificates, 'tls.key'), '-out', join(this.certificates, 'tls.crt')
    ], { encoding: 'utf8', timeout: 20_000 })
    if (result.status !== 0) throw new Error(`openssl could not make a test certificate: ${result.stderr}`)
  }

  /** The test certificate (to trust it in the client). */
  get certificate (): string {
    return readFileSync(join(this.certificates, 'tls.crt'), 'utf8')
  }

  get output (): string {
    return `${this.#output}${existsSync(join(this.directory, 'error.log')) ? readFileSync(join(this.directory, 'error.log'), 'utf8') : ''}`
  }

  /** Starts nginx with `site` (the placed deploy/nginx.conf) included in a minimal main configuration. */
  async start (site: string, httpsPort: number, timeoutMs = 10_000): Promise<void> {
    if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: run npm run test:setup (installs Debian's nginx)`)
    const temp = join(this.directory, 'temp')
    mkdirSync(temp, { recursive: true, mode: 0o700 })
    writeFileSync(join(this.directory, 'site.conf'), site)
    writeFileSync(join(this.directory, 'nginx.conf'), `daemon off;
worker_processes 1;
pid ${join(this.directory, 'nginx.pid')};
error_log ${join(this.directory, 'error.log')} warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path ${join(temp, 'client_body')};
    proxy_temp_path ${join(temp, 'proxy')};
    fastcgi_temp_path ${join(temp, 'fastcgi')};
    uwsgi_temp_path ${join(temp, 'uwsgi')};
    scgi_temp_path ${join(temp, 'scgi')};
    include ${join(this.directory, 'site.conf')};
}
`)
    const child = spawn(NGINX, ['-p', this.directory, '-c', join(this.directory, 'nginx.conf'), '-e', join(this.directory, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout?.on('data', (chunk: Buffer) => { this.#output += chunk.toString('utf8') })
    child.stderr?.on('data', (chunk: Buffer) => { this.#output += chunk.toString('utf8') })
    this.#process = child
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`nginx exited: ${this.output}`)
      if (await accepts(httpsPort)) return
      await sleep(50)
    }
    throw new Error(`nginx did not listen within ${timeoutMs} ms: ${this.output}`)
  }

  async dispose (): Promise<void> {
    const child = this.#process
    this.#process = undefined
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await Promise.race([exited, sleep(5000, undefined, { ref: false })])
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    rmSync(this.directory, { recursive: true, force: true })
  }
}

async function accepts (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.setTimeout(500)
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { resolve(false) })
    socket.once('timeout', () => { socket.destroy(); resolve(false) })
  })
}
