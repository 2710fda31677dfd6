/**
 * docs/telemetry.md lists every metric and every counted event of src/telemetry/names.ts, with the
 * same name, kind, unit and labels, and nothing else; every counted event is one the core logs.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { CORE_ROOT } from '../helpers/app.js'
import { EVENT_METRICS, METRICS } from '../../src/telemetry/names.js'

const doc = readFileSync(join(CORE_ROOT, 'docs', 'telemetry.md'), 'utf8')
const rows = (section: string): string[][] => {
  const start = doc.indexOf(`## ${section}`)
  const end = doc.indexOf('\n## ', start + 1)
  return doc.slice(start, end === -1 ? undefined : end).split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
}
const code = (text: string): string => text.replace(/^`|`$/g, '')

test('every metric is in docs/telemetry.md with its Prometheus name, kind, unit and labels, and the page lists no other', () => {
  const documented = rows('Metrics').map(([name, prometheus, kind, unit, labels]) => ({
    name: code(name ?? ''), prometheus: code(prometheus ?? ''), kind, unit: code(unit ?? ''), labels: (labels ?? '').split(',').map((label) => code(label.trim())).filter(Boolean)
  }))
  const expected = Object.values(METRICS).map((metric) => ({
    name: metric.name,
    prometheus: `${metric.name.replaceAll('.', '_')}${metric.kind === 'counter' ? '_total' : ''}`,
    kind: metric.kind,
    unit: metric.unit,
    labels: [...metric.labels]
  }))
  assert.deepEqual(documented, expected)
})

test('every counted event is in docs/telemetry.md with its metric, and is an event the core logs', () => {
  const documented = rows('Events counted').map(([event, metric]) => [code(event ?? ''), code(metric ?? '')])
  assert.deepEqual(documented, Object.entries(EVENT_METRICS).map(([event, mapping]) => [event, METRICS[mapping.metric].name]))
  const sources = readdirSync(join(CORE_ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('telemetry'))
    .map((file) => readFileSync(join(CORE_ROOT, 'src', file), 'utf8')).join('\n')
  for (const event of Object.keys(EVENT_METRICS)) assert.ok(sources.includes(`event: '${event}'`), `${event} is logged somewhere`)
})
