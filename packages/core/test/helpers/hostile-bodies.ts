/**
 * Response bodies a hostile identity provider answers with (issue 33, item 1): a gzip bomb that
 * inflates to {@link BOMB_INFLATED_BYTES} (the attack run's 306 KB that killed the process) and an
 * oversized plain body sent chunked, without Content-Length, until the reader hangs up (at most
 * {@link OVERSIZED_MAX_BYTES}). Both start like the JSON or XML document they stand in for.
 */
import type { ServerResponse } from 'node:http'
import { gzipSync } from 'node:zlib'

export type HostileBody = 'gzip-bomb' | 'oversized'

/** What the bomb inflates to: 300 MB. */
export const BOMB_INFLATED_BYTES = 300 * 1024 * 1024
/** The most an oversized body writes before giving up on a reader that never stops. */
export const OVERSIZED_MAX_BYTES = 64 * 1024 * 1024

const MEGABYTE_OF_A = gzipSync(Buffer.alloc(1024 * 1024, 'a'), { level: 9 })

/**
 * A gzip stream of several members (RFC 1952 section 2.2: a gzip file is a series of members;
 * Node's gunzip, as undici uses it, reads them all): `{"issuer":"` then 300 members of 1 MB of
 * `a`, about 300 KB on the wire.
 */
export const GZIP_BOMB: Buffer = Buffer.concat([
  gzipSync('{"issuer":"'),
  ...Array.from({ length: BOMB_INFLATED_BYTES / (1024 * 1024) }, () => MEGABYTE_OF_A),
  gzipSync('"}')
])

/** Writes `body` as the answer, with `contentType`; resolves when it is sent or the reader has gone. */
export async function writeHostile (response: ServerResponse, body: HostileBody, contentType = 'application/json'): Promise<void> {
  if (body === 'gzip-bomb') {
    response.writeHead(200, { 'content-type': contentType, 'content-encoding': 'gzip', 'content-length': GZIP_BOMB.length })
    response.end(GZIP_BOMB)
    return
  }
  response.writeHead(200, { 'content-type': contentType })
  const chunk = Buffer.alloc(64 * 1024, 'a')
  let written = 0
  const state = { gone: false, wake: (): void => {} }
  response.on('close', () => { state.gone = true; state.wake() })
  response.on('drain', () => { state.wake() })
  response.write('{"issuer":"')
  while (!state.gone && written < OVERSIZED_MAX_BYTES) {
    written += chunk.length
    if (!response.write(chunk)) await new Promise<void>((resolve) => { state.wake = resolve })
  }
  response.end('"}')
}
