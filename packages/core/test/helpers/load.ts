/**
 * A bounded load for the tests: `connections` keep-alive https connections, each sending the
 * given requests in turn, together at most `ratePerSecond`, until stopped, after `maxRequests` in
 * all, or after `maxMs`, whichever is first. Every answer is counted by status; transport errors (refused, reset, timed out) are
 * counted too. Node's own https client, so the generated project needs no load tool.
 */
import { Agent, request } from 'node:https'
import { setTimeout as sleep } from 'node:timers/promises'

export interface LoadRequest {
  readonly path: string
  readonly headers?: Record<string, string>
}

export interface LoadResult {
  readonly total: number
  /** Status code -> count. */
  readonly statuses: Record<number, number>
  /** Error code (ECONNRESET, timeout...) -> count. */
  readonly errors: Record<string, number>
  /** Longest request, milliseconds. */
  readonly maxLatencyMs: number
}

export interface Load {
  /** Stops sending and resolves with the counts once every connection's last request is answered. */
  stop: () => Promise<LoadResult>
  /** Requests answered so far. */
  readonly done: () => number
}

export function startLoad (options: { port: number, ca: string, requests: readonly LoadRequest[], connections: number, ratePerSecond: number, maxRequests: number, maxMs: number }): Load {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections, ca: options.ca })
  const statuses: Record<number, number> = {}
  const errors: Record<string, number> = {}
  let total = 0
  let maxLatencyMs = 0
  const state = { stopped: false }
  const deadline = Date.now() + options.maxMs

  const once = async (entry: LoadRequest): Promise<void> => {
    const started = Date.now()
    await new Promise<void>((resolve) => {
      const outgoing = request({ host: '127.0.0.1', port: options.port, path: entry.path, method: 'GET', agent, headers: entry.headers, timeout: 15_000 }, (response) => {
        response.resume()
        response.on('end', () => {
          const status = response.statusCode ?? 0
          statuses[status] = (statuses[status] ?? 0) + 1
          resolve()
        })
        response.on('error', (error: NodeJS.ErrnoException) => { errors[error.code ?? error.name] = (errors[error.code ?? error.name] ?? 0) + 1; resolve() })
      })
      outgoing.on('timeout', () => { outgoing.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })) })
      outgoing.on('error', (error: NodeJS.ErrnoException) => { errors[error.code ?? error.name] = (errors[error.code ?? error.name] ?? 0) + 1; resolve() })
      outgoing.end()
    })
    total++
    maxLatencyMs = Math.max(maxLatencyMs, Date.now() - started)
  }

  const intervalMs = 1000 * options.connections / options.ratePerSecond
  const worker = async (offset: number): Promise<void> => {
    for (let index = offset; !state.stopped && total < options.maxRequests && Date.now() < deadline; index++) {
      const started = Date.now()
      await once(options.requests[index % options.requests.length] as LoadRequest)
      const rest = intervalMs - (Date.now() - started)
      if (rest > 0) await sleep(rest)
    }
  }
  const workers = Promise.all(Array.from({ length: options.connections }, async (_value, index) => await worker(index)))
  return {
    stop: async () => {
      state.stopped = true
      await workers
      agent.destroy()
      return { total, statuses, errors, maxLatencyMs }
    },
    done: () => total
  }
}
