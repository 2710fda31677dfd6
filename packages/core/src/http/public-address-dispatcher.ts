/**
 * The connections of the providers from the app's provider source (issue 33, item 2): an undici
 * dispatcher whose every connection is checked against the address actually dialled, with the
 * rules of outbound-address.ts. In a module of its own so that undici (about 1 MB of code and
 * several MB of memory once loaded) is loaded only by an app with a provider source outside
 * Development, not by every app at startup.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import { Agent, buildConnector, type Dispatcher } from 'undici'
import { CoreError, type LogCode } from '../errors.js'
import { isInternalAddress, type InternalHostAllowance } from './outbound-address.js'

export class InternalAddressError extends CoreError {
  readonly code = 'ERR_INTERNAL_ADDRESS' satisfies LogCode

  constructor () {
    super('the provider\'s host resolved to an internal address')
    this.name = 'InternalAddressError'
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A dispatcher whose every connection is checked against the address actually dialled: a literal
 * internal address is refused before connecting, a host name's lookup answers only public (or
 * allowed) addresses, else {@link InternalAddressError}.
 */
export function publicAddressDispatcher (allowance: InternalHostAllowance): Dispatcher {
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) { callback(error, []); return }
      const usable = allowance.allowsHost(hostname) ? addresses : addresses.filter(({ address }) => !isInternalAddress(address) || allowance.allowsAddress(address))
      if (usable.length === 0) { callback(new InternalAddressError(), []); return }
      if (options.all === true) callback(null, usable)
      else callback(null, usable[0]!.address, usable[0]!.family)
    })
  }
  // undici's own connector (TLS, timeouts, sessions) with the guarded lookup; a literal address
  // is connected without a lookup, so it is checked before the connector is called.
  const connector = buildConnector({ lookup } as buildConnector.BuildOptions)
  const connect: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '')
    if (isIP(host) !== 0 && isInternalAddress(host) && !allowance.allowsAddress(host)) {
      callback(new InternalAddressError(), null)
      return
    }
    connector(options, callback)
  }
  return new Agent({ connect })
}
