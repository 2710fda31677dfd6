/**
 * Splitting a long cookie value into numbered chunk cookies and joining them back, in the format
 * of the model the contract comes from: the main cookie holds `chunks-<n>` and the chunks are
 * `<name>C1` ... `<name>C<n>`.
 */

/** Characters of value per cookie, leaving room for the name and attributes under ~4096 bytes. */
export const CHUNK_SIZE = 3800
/** Upper bound on chunks read or written; a longer ticket is refused. */
export const MAX_CHUNKS = 8

const CHUNKS_PREFIX = 'chunks-'

export const chunkName = (name: string, index: number): string => `${name}C${index}`

/** Cookie name -> value pairs to write for `value`: the main cookie first, then the chunks. */
export function splitCookieValue (name: string, value: string): Array<[string, string]> {
  if (value.length <= CHUNK_SIZE) return [[name, value]]
  const count = Math.ceil(value.length / CHUNK_SIZE)
  if (count > MAX_CHUNKS) throw new RangeError(`A session ticket may span at most ${MAX_CHUNKS} cookies.`)
  const cookies: Array<[string, string]> = [[name, `${CHUNKS_PREFIX}${count}`]]
  for (let index = 1; index <= count; index++) {
    cookies.push([chunkName(name, index), value.slice((index - 1) * CHUNK_SIZE, index * CHUNK_SIZE)])
  }
  return cookies
}

/** The number of chunks a main-cookie value announces, 0 when it is not a chunk header. */
export function announcedChunks (mainValue: string): number {
  if (!mainValue.startsWith(CHUNKS_PREFIX)) return 0
  const text = mainValue.slice(CHUNKS_PREFIX.length)
  if (!/^[1-9]$/.test(text)) return -1
  const count = Number(text)
  return count <= MAX_CHUNKS ? count : -1
}

/**
 * Reassembles the value from the request's cookies; undefined when absent, when any chunk is
 * missing or empty, or when a chunk beyond the announced count is present (a partial or padded
 * ticket never opens).
 */
export function joinCookieValue (cookies: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const main = cookies[name]
  if (main === undefined || main === '') return undefined
  const count = announcedChunks(main)
  if (cookies[chunkName(name, Math.max(count, 0) + 1)] !== undefined) return undefined
  if (count === 0) return main
  if (count < 0) return undefined
  let value = ''
  for (let index = 1; index <= count; index++) {
    const chunk = cookies[chunkName(name, index)]
    if (chunk === undefined || chunk === '') return undefined
    value += chunk
  }
  return value
}
