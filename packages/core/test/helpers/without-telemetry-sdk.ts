/**
 * `node --import tsx --import <this file> ...`: the process behaves as an app without the
 * OpenTelemetry SDK installed (the core's optional peer dependencies, docs/telemetry.md,
 * "Installing"). A module resolve hook, registered after tsx's so that it runs first, fails every
 * SDK package the way Node does for a package that is not there; `@opentelemetry/api` (a
 * dependency of the core) still resolves.
 */
import { register } from 'node:module'

const hooks = `
const SDK = /^(@opentelemetry\\/(sdk-metrics|resources|exporter-prometheus|exporter-metrics-otlp-http|sdk-trace-node|exporter-trace-otlp-http)|@fastify\\/otel)(\\/|$)/
export async function resolve (specifier, context, nextResolve) {
  if (SDK.test(specifier)) {
    const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL)
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return await nextResolve(specifier, context)
}
`
register(`data:text/javascript,${encodeURIComponent(hooks)}`)
