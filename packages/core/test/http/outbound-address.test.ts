/**
 * Providers from the provider source reach only public addresses outside Development (issue 33,
 * item 2; src/http/outbound-address.ts): every numeric and named form of an internal target is
 * recognized, a host name that resolves to one is refused, the operator's allow-list lets an
 * on-premises host through, and the connection itself is checked against the address dialled
 * (real sockets on loopback: the literal and the looked-up name are both refused, an allowed
 * address connects).
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { fetchBounded } from '../../src/http/bounded-fetch.js'
import { allowanceEntryProblem, InternalHostAllowance, isInternalAddress, resolvedTargetProblem, urlTargetProblem, type HostResolver } from '../../src/http/outbound-address.js'
import { publicAddressDispatcher } from '../../src/http/public-address-dispatcher.js'

const NONE = new InternalHostAllowance([])

describe('internal addresses', () => {
  const internal = ['127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '[::1]', '224.0.0.1', '255.255.255.255']
  const external = ['8.8.8.8', '93.184.216.34', '172.32.0.1', '2606:4700::1111', '2001:4860:4860::8888', '::ffff:808:808']
  for (const address of internal) test(`${address} is internal`, () => { assert.equal(isInternalAddress(address), true) })
  for (const address of external) test(`${address} is public`, () => { assert.equal(isInternalAddress(address), false) })
})

describe('URL targets of a definition', () => {
  const refused: ReadonlyArray<readonly [string, RegExp]> = [
    ['https://0x7f000001/', /internal address/],
    ['https://2130706433/', /internal address/],
    ['https://0177.0.0.1/', /internal address/],
    ['https://[::1]:8443/', /internal address/],
    ['https://169.254.169.254/latest/meta-data', /internal address/],
    ['https://[::ffff:10.0.0.1]/', /internal address/],
    ['https://localhost/', /localhost/],
    ['https://idp.localhost/', /localhost/],
    ['https://admin:secret@idp.example/', /user information/]
  ]
  for (const [url, problem] of refused) test(`${url} is refused`, () => { assert.match(urlTargetProblem(url, NONE) ?? '', problem) })
  test('a public host name passes before resolution', () => { assert.equal(urlTargetProblem('https://login.example.com/tenant', NONE), undefined) })

  test('the allow-list lets named hosts and networks through', () => {
    const allowance = new InternalHostAllowance(['idp.corp.example', '10.20.0.0/16', '192.168.7.7'])
    assert.equal(urlTargetProblem('https://10.20.3.4/', allowance), undefined)
    assert.equal(urlTargetProblem('https://192.168.7.7/', allowance), undefined)
    assert.match(urlTargetProblem('https://192.168.7.8/', allowance) ?? '', /internal address/)
    assert.match(urlTargetProblem('https://10.21.0.1/', allowance) ?? '', /internal address/)
  })

  test('a host name that resolves to an internal address is refused; one that resolves publicly or is allowed is not', async () => {
    const answers: Record<string, string[]> = { 'idp.rebind.example': ['203.0.114.7', '10.0.0.5'], 'idp.public.example': ['93.184.216.34'], 'idp.corp.example': ['10.9.9.9'] }
    const resolve: HostResolver = (hostname, _options, callback) => {
      const found = answers[hostname]
      if (found === undefined) { callback(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), []); return }
      callback(null, found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))
    }
    assert.match(await resolvedTargetProblem('https://idp.rebind.example/', NONE, resolve) ?? '', /resolves to an internal address/)
    assert.equal(await resolvedTargetProblem('https://idp.public.example/', NONE, resolve), undefined)
    assert.equal(await resolvedTargetProblem('https://idp.corp.example/', new InternalHostAllowance(['idp.corp.example']), resolve), undefined)
    assert.equal(await resolvedTargetProblem('https://idp.unknown.example/', NONE, resolve), undefined, 'an unresolvable name is the provider\'s own failure')
  })

  test('allow-list entries are host names, addresses or networks', () => {
    for (const entry of ['idp.corp.example', '10.0.0.0/8', 'fd00::/8', '192.168.1.1']) assert.equal(allowanceEntryProblem(entry), undefined, entry)
    for (const entry of ['10.0.0.0/33', 'not a host', 'https://idp.example', '10.0.0.0/x']) assert.notEqual(allowanceEntryProblem(entry), undefined, entry)
  })
})

describe('the connection is checked against the address dialled', () => {
  let server: Server
  let port = 0
  before(async () => {
    server = createServer((_request, response) => { response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}') })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  async function reach (url: string, allowance: InternalHostAllowance): Promise<unknown> {
    const dispatcher = publicAddressDispatcher(allowance)
    try {
      const response = await fetchBounded(url, {}, { kind: 'other', timeoutMs: 5_000, dispatcher })
      return await response.json()
    } catch (error) {
      return error
    } finally {
      await dispatcher.close()
    }
  }

  const causeCodeOf = (error: unknown): unknown => (error as { cause?: { code?: unknown } }).cause?.code

  test('a literal loopback address is refused before connecting', async () => {
    assert.equal(causeCodeOf(await reach(`http://127.0.0.1:${port}/`, NONE)), 'ERR_INTERNAL_ADDRESS')
  })
  test('a name that the resolver answers with a loopback address is refused at connect time', async () => {
    assert.equal(causeCodeOf(await reach(`http://localhost:${port}/`, NONE)), 'ERR_INTERNAL_ADDRESS')
  })
  test('an allowed network and an allowed host name connect', async () => {
    assert.deepEqual(await reach(`http://127.0.0.1:${port}/`, new InternalHostAllowance(['127.0.0.0/8'])), { ok: true })
    assert.deepEqual(await reach(`http://localhost:${port}/`, new InternalHostAllowance(['localhost'])), { ok: true })
  })
})
