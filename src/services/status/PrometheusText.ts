/**
 * The Prometheus text exposition format, version 0.0.4, of Effect metric snapshots: the body of
 * `GET /metrics` (docs/status-page.md, "every Effect `Metric` of the process in Prometheus text
 * format 0.0.4").
 *
 * Every kind of `MetricState` is written, told apart by the guards of `effect/MetricState`:
 * - a counter is a `counter`, a gauge a `gauge`, one sample each;
 * - a histogram is a `histogram`: its cumulative buckets as `<name>_bucket{le="…"}` (Effect's
 *   histogram state already holds cumulative counts, in boundary order), always ending with
 *   `le="+Inf"` (equal to the count), then `<name>_sum` and `<name>_count`;
 * - a frequency is a `counter` with one sample per occurrence key, the key in the label `key`;
 * - a summary is a `summary`: one sample per quantile (label `quantile`; a quantile Effect could
 *   not resolve is `NaN`), then `<name>_sum` and `<name>_count`. The minimum and maximum of
 *   histograms and summaries have no place in the format and are left out.
 *
 * The metric key's tags (`MetricLabel` key and value) become the labels of every sample.
 *
 * Decisions:
 * - Names are kept as the Effect metric gives them, but for the characters the format forbids: a
 *   metric name keeps `[a-zA-Z_:][a-zA-Z0-9_:]*`, a label name `[a-zA-Z_][a-zA-Z0-9_]*` (the format
 *   allows no colon there), and every other character (per code point, so an emoji is one `_`)
 *   becomes `_`; an empty name is `_`. A counter without the `_total` suffix keeps its name: the
 *   suffix is a convention in 0.0.4 (only OpenMetrics requires it), and adding it would rename
 *   the series dashboards already query.
 * - Label values are escaped (`\\`, `\"`, `\n`), so are `# HELP` texts (`\\`, `\n`). Numbers are
 *   JavaScript's shortest round-trip form, which the format's float syntax reads; infinities and
 *   not-a-number are `+Inf`, `-Inf` and `NaN`; bigint counters and gauges are printed exactly.
 * - The samples of one name form one group under one `# HELP` (the first description, in output
 *   order, of a metric that has a non-empty one; none without) and one `# TYPE` line, however
 *   many pairs share the name with different tags. When names meet after replacing characters
 *   and their kinds disagree, the format allows one type per name: the first kind in the order
 *   counter (and frequency), gauge, histogram, summary is written and the others are left out.
 * - A tag that repeats a label name keeps its last value (Effect appends later tags); a tag named
 *   like the label the kind adds (`key`, `le`, `quantile`) gives way to it.
 * - The output is sorted so that the same metrics always give the same text: groups by name,
 *   within a group the series by labels (sorted by name, compared pair by pair, code unit order),
 *   a frequency's keys in code unit order, buckets by `le` and quantiles ascending. Each line
 *   ends with a line feed; no metrics give the empty text. No timestamps are written.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"

type Kind = "counter" | "gauge" | "histogram" | "summary"

/** The order a kind wins in when two meet under one name. */
const kindRank: Record<Kind, number> = { counter: 0, gauge: 1, histogram: 2, summary: 3 }

type Labels = ReadonlyArray<readonly [string, string]>

/** The samples of one series: one line for a counter or gauge, several for a histogram or summary. */
interface Block {
  readonly labels: Labels
  readonly lines: ReadonlyArray<string>
  readonly source: string
}

interface Rendered {
  readonly name: string
  readonly kind: Kind
  readonly help: string | undefined
  readonly blocks: ReadonlyArray<Block>
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const compareLabels = (a: Labels, b: Labels): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const [an, av] = a[i]!
    const [bn, bv] = b[i]!
    const c = compareStrings(an, bn) || compareStrings(av, bv)
    if (c !== 0) return c
  }
  return a.length - b.length
}

const sanitize = (name: string, first: RegExp, rest: RegExp): string =>
  name === "" ? "_" : Array.from(name, (c, i) => ((i === 0 ? first : rest).test(c) ? c : "_")).join("")

const metricName = (name: string): string => sanitize(name, /^[a-zA-Z_:]$/, /^[a-zA-Z0-9_:]$/)

const labelName = (name: string): string => sanitize(name, /^[a-zA-Z_]$/, /^[a-zA-Z0-9_]$/)

const escapeLabelValue = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const formatNumber = (n: number | bigint): string =>
  typeof n === "bigint"
    ? n.toString()
    : Number.isNaN(n)
    ? "NaN"
    : n === Number.POSITIVE_INFINITY
    ? "+Inf"
    : n === Number.NEGATIVE_INFINITY
    ? "-Inf"
    : String(n)

const sample = (name: string, labels: Labels, value: number | bigint): string =>
  (labels.length === 0
    ? name
    : `${name}{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`) +
  ` ${formatNumber(value)}`

/** The key's tags as labels: names sanitized, the last value of a repeated name kept, sorted by name, `reserved` left out. */
const tagLabels = (pair: MetricPair.MetricPair.Untyped, reserved?: string): Labels => {
  const byName = new Map<string, string>()
  for (const tag of pair.metricKey.tags) {
    const name = labelName(tag.key)
    if (name !== reserved) byName.set(name, tag.value)
  }
  return [...byName].sort(([a], [b]) => compareStrings(a, b))
}

const renderPair = (pair: MetricPair.MetricPair.Untyped): Rendered | undefined => {
  const name = metricName(pair.metricKey.name)
  const help = Option.getOrUndefined(pair.metricKey.description)
  const source = pair.metricKey.name
  const state: unknown = pair.metricState
  if (MetricState.isCounterState(state)) {
    const labels = tagLabels(pair)
    return { name, kind: "counter", help, blocks: [{ labels, lines: [sample(name, labels, state.count)], source }] }
  }
  if (MetricState.isGaugeState(state)) {
    const labels = tagLabels(pair)
    return { name, kind: "gauge", help, blocks: [{ labels, lines: [sample(name, labels, state.value)], source }] }
  }
  if (MetricState.isFrequencyState(state)) {
    const tags = tagLabels(pair, "key")
    const blocks = [...state.occurrences]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([key, count]): Block => {
        const labels: Labels = [...tags, ["key", key]]
        return { labels, lines: [sample(name, labels, count)], source }
      })
    return { name, kind: "counter", help, blocks }
  }
  if (MetricState.isHistogramState(state)) {
    const labels = tagLabels(pair, "le")
    const bucket = `${name}_bucket`
    const lines = [...state.buckets]
      .filter(([le]) => !Number.isNaN(le) && le !== Number.POSITIVE_INFINITY)
      .sort(([a], [b]) => a - b)
      .map(([le, count]) => sample(bucket, [...labels, ["le", formatNumber(le)]], count))
    lines.push(
      sample(bucket, [...labels, ["le", "+Inf"]], state.count),
      sample(`${name}_sum`, labels, state.sum),
      sample(`${name}_count`, labels, state.count)
    )
    return { name, kind: "histogram", help, blocks: [{ labels, lines, source }] }
  }
  if (MetricState.isSummaryState(state)) {
    const labels = tagLabels(pair, "quantile")
    const lines = [...state.quantiles]
      .sort(([a], [b]) => a - b)
      .map(([q, value]) =>
        sample(name, [...labels, ["quantile", formatNumber(q)]], Option.getOrElse(value, () => Number.NaN))
      )
    lines.push(sample(`${name}_sum`, labels, state.sum), sample(`${name}_count`, labels, state.count))
    return { name, kind: "summary", help, blocks: [{ labels, lines, source }] }
  }
  return undefined
}

/**
 * The Prometheus text exposition format (0.0.4) of metric pairs, as `Metric.snapshot` gives them:
 * one group per metric name (`# HELP` when described, `# TYPE`, then its samples), sorted, each
 * line ending with a line feed. A state of a kind `effect/MetricState` does not name is left out.
 * @since 0.1.0
 * @category utils
 */
export const render = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const groups = new Map<string, Array<Rendered>>()
  for (const pair of pairs) {
    const rendered = renderPair(pair)
    if (rendered === undefined) continue
    const group = groups.get(rendered.name)
    if (group === undefined) groups.set(rendered.name, [rendered])
    else group.push(rendered)
  }
  const out: Array<string> = []
  for (const name of [...groups.keys()].sort(compareStrings)) {
    const group = groups.get(name)!
    const kind = group.map((r) => r.kind).reduce((a, b) => (kindRank[b] < kindRank[a] ? b : a))
    const blocks = group
      .filter((r) => r.kind === kind)
      .flatMap((r) => r.blocks.map((block) => ({ block, help: r.help })))
      .sort((a, b) =>
        compareLabels(a.block.labels, b.block.labels) ||
        compareStrings(a.block.source, b.block.source) ||
        compareStrings(a.block.lines.join("\n"), b.block.lines.join("\n"))
      )
    const help = blocks.find(({ help }) => help !== undefined && help !== "")?.help ??
      group.find((r) => r.kind === kind && r.help !== undefined && r.help !== "")?.help
    if (help !== undefined) out.push(`# HELP ${name} ${escapeHelp(help)}`)
    out.push(`# TYPE ${name} ${kind}`)
    for (const { block } of blocks) out.push(...block.lines)
  }
  return out.length === 0 ? "" : out.join("\n") + "\n"
}

/**
 * The Prometheus text of every metric of the process (`Metric.snapshot`, then `render`).
 * @since 0.1.0
 * @category utils
 */
export const snapshot: Effect.Effect<string> = Effect.map(Metric.snapshot, render)
