/**
 * The Prometheus text of Effect metrics (src/services/status/PrometheusText.ts; docs/status-page.md,
 * `GET /metrics`): real metrics of every kind, tagged, with odd names and hostile label values,
 * are updated, snapshotted and rendered; the lines of each test's own metrics (the global registry
 * holds others) are compared exactly, and the whole output is checked against the format's line
 * grammar. Hand-made pairs cover what live metrics cannot reach deterministically.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import * as PrometheusText from "../../../src/services/status/PrometheusText.ts"

/** The metric name a line is about (the third word of a comment line, or the sample's name). */
const nameOf = (line: string): string =>
  line.startsWith("# ") ? (line.split(" ")[2] ?? "") : (/^[^{ ]*/.exec(line)?.[0] ?? "")

/** The lines of the metrics whose names start with `prefix`. */
const linesOf = (text: string, prefix: string): Array<string> =>
  text.split("\n").filter((line) => line !== "" && nameOf(line).startsWith(prefix))

const metricNameRe = "[a-zA-Z_:][a-zA-Z0-9_:]*"
const labelRe = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`
const valueRe = "(?:[+-]?Inf|NaN|-?[0-9]+(?:\\.[0-9]+)?(?:e[+-]?[0-9]+)?)"
const sampleLine = new RegExp(`^(${metricNameRe})(?:\\{${labelRe}(?:,${labelRe})*\\})? ${valueRe}$`)
const helpLine = new RegExp(`^# HELP (${metricNameRe}) (?:[^\\\\\\n]|\\\\[\\\\n])*$`)
const typeLine = new RegExp(`^# TYPE (${metricNameRe}) (counter|gauge|histogram|summary|untyped)$`)

/** Every line of `text` fits the 0.0.4 grammar; one HELP and one TYPE per name, before its samples, in one group. */
const checkGrammar = (text: string): void => {
  expect(text === "" || text.endsWith("\n")).toBe(true)
  const lines = text.split("\n").slice(0, -1)
  const typed = new Map<string, string>()
  const helped = new Set<string>()
  const done = new Set<string>()
  let current = ""
  for (const line of lines) {
    const help = helpLine.exec(line)
    const type = typeLine.exec(line)
    const sample = sampleLine.exec(line)
    if (help === null && type === null && sample === null) expect.fail(`not a 0.0.4 line: ${JSON.stringify(line)}`)
    const family = help?.[1] ?? type?.[1]
    if (family !== undefined) {
      if (family !== current) {
        expect(done.has(family), `a second group for ${family}`).toBe(false)
        if (current !== "") done.add(current)
        current = family
      }
      if (help !== null) {
        expect(helped.has(family) || typed.has(family), `HELP for ${family} twice or after TYPE`).toBe(false)
        helped.add(family)
      } else {
        expect(typed.has(family), `TYPE for ${family} twice`).toBe(false)
        typed.set(family, type![2]!)
      }
      continue
    }
    const name = sample![1]!
    const kind = typed.get(current)
    const suffixes = kind === "histogram" ? ["_bucket", "_sum", "_count"] : kind === "summary" ? ["", "_sum", "_count"] : [""]
    expect(suffixes.some((s) => name === current + s), `${name} outside its group (${current})`).toBe(true)
  }
}

describe("PrometheusText.render on live metrics", () => {
  it.effect("counters: one HELP and TYPE for all tags, HELP escaped, bigint exact, no _total added", () =>
    Effect.gen(function*() {
      const requests = Metric.counter("ptest_counter_requests", {
        description: "Requests served.\nBy method \\ path"
      })
      yield* Metric.incrementBy(Metric.tagged(requests, "method", "POST"), 2)
      yield* Metric.incrementBy(Metric.tagged(Metric.tagged(requests, "method", "GET"), "code", "200"), 5)
      yield* Metric.incrementBy(Metric.tagged(requests, "method", "GET"), 1)
      const big = Metric.counter("ptest_counter_big_total", { bigint: true })
      yield* Metric.incrementBy(big, 2n ** 70n + 1n)
      const text = yield* PrometheusText.snapshot
      checkGrammar(text)
      expect(linesOf(text, "ptest_counter_")).toEqual([
        "# TYPE ptest_counter_big_total counter",
        "ptest_counter_big_total 1180591620717411303425",
        "# HELP ptest_counter_requests Requests served.\\nBy method \\\\ path",
        "# TYPE ptest_counter_requests counter",
        "ptest_counter_requests{code=\"200\",method=\"GET\"} 5",
        "ptest_counter_requests{method=\"GET\"} 1",
        "ptest_counter_requests{method=\"POST\"} 2"
      ])
    }))

  it.effect("gauges: negative, fractional, infinite, not-a-number and bigint values", () =>
    Effect.gen(function*() {
      yield* Metric.set(Metric.gauge("ptest_gauge_temperature", { description: "Degrees." }), -3.25)
      yield* Metric.set(Metric.gauge("ptest_gauge_up"), Number.POSITIVE_INFINITY)
      yield* Metric.set(Metric.gauge("ptest_gauge_down"), Number.NEGATIVE_INFINITY)
      yield* Metric.set(Metric.gauge("ptest_gauge_nan"), Number.NaN)
      yield* Metric.set(Metric.gauge("ptest_gauge_tiny"), 1.5e-7)
      yield* Metric.set(Metric.gauge("ptest_gauge_wide", { bigint: true }), -(2n ** 64n))
      const text = yield* PrometheusText.snapshot
      checkGrammar(text)
      expect(linesOf(text, "ptest_gauge_")).toEqual([
        "# TYPE ptest_gauge_down gauge",
        "ptest_gauge_down -Inf",
        "# TYPE ptest_gauge_nan gauge",
        "ptest_gauge_nan NaN",
        "# HELP ptest_gauge_temperature Degrees.",
        "# TYPE ptest_gauge_temperature gauge",
        "ptest_gauge_temperature -3.25",
        "# TYPE ptest_gauge_tiny gauge",
        "ptest_gauge_tiny 1.5e-7",
        "# TYPE ptest_gauge_up gauge",
        "ptest_gauge_up +Inf",
        "# TYPE ptest_gauge_wide gauge",
        "ptest_gauge_wide -18446744073709551616"
      ])
    }))

  it.effect("histograms: cumulative buckets up to le=\"+Inf\", then _sum and _count, per tag set", () =>
    Effect.gen(function*() {
      const latency = Metric.histogram(
        "ptest_histogram_latency",
        MetricBoundaries.linear({ start: 0, width: 10, count: 4 }),
        "Latency in ms."
      )
      const get = Metric.tagged(latency, "route", "/get")
      for (const ms of [5, 15, 15, 100]) yield* Metric.update(get, ms)
      yield* Metric.update(Metric.tagged(latency, "route", "/put"), 0.5)
      const text = yield* PrometheusText.snapshot
      checkGrammar(text)
      expect(linesOf(text, "ptest_histogram_")).toEqual([
        "# HELP ptest_histogram_latency Latency in ms.",
        "# TYPE ptest_histogram_latency histogram",
        "ptest_histogram_latency_bucket{route=\"/get\",le=\"0\"} 0",
        "ptest_histogram_latency_bucket{route=\"/get\",le=\"10\"} 1",
        "ptest_histogram_latency_bucket{route=\"/get\",le=\"20\"} 3",
        "ptest_histogram_latency_bucket{route=\"/get\",le=\"+Inf\"} 4",
        "ptest_histogram_latency_sum{route=\"/get\"} 135",
        "ptest_histogram_latency_count{route=\"/get\"} 4",
        "ptest_histogram_latency_bucket{route=\"/put\",le=\"0\"} 0",
        "ptest_histogram_latency_bucket{route=\"/put\",le=\"10\"} 1",
        "ptest_histogram_latency_bucket{route=\"/put\",le=\"20\"} 1",
        "ptest_histogram_latency_bucket{route=\"/put\",le=\"+Inf\"} 1",
        "ptest_histogram_latency_sum{route=\"/put\"} 0.5",
        "ptest_histogram_latency_count{route=\"/put\"} 1"
      ])
    }))

  it.effect("frequencies: a counter per key, the key in the label `key`, keys sorted", () =>
    Effect.gen(function*() {
      const outcomes = Metric.tagged(
        Metric.frequency("ptest_frequency_outcomes", { description: "Outcomes." }),
        "region",
        "eu"
      )
      for (const word of ["ok", "ok", "fail", "say \"no\"\n\u{1F6AB}"]) yield* Metric.update(outcomes, word)
      // A tag named like the key label gives way to it.
      yield* Metric.update(Metric.tagged(Metric.frequency("ptest_frequency_shadow"), "key", "tag"), "word")
      const text = yield* PrometheusText.snapshot
      checkGrammar(text)
      expect(linesOf(text, "ptest_frequency_")).toEqual([
        "# HELP ptest_frequency_outcomes Outcomes.",
        "# TYPE ptest_frequency_outcomes counter",
        "ptest_frequency_outcomes{region=\"eu\",key=\"fail\"} 1",
        "ptest_frequency_outcomes{region=\"eu\",key=\"ok\"} 2",
        "ptest_frequency_outcomes{region=\"eu\",key=\"say \\\"no\\\"\\n\u{1F6AB}\"} 1",
        "# TYPE ptest_frequency_shadow counter",
        "ptest_frequency_shadow{key=\"word\"} 1"
      ])
    }))

  it.effect("summaries: quantile samples ascending, then _sum and _count; no observations give NaN", () =>
    Effect.gen(function*() {
      const sizes = Metric.summary({
        name: "ptest_summary_sizes",
        maxAge: "1 hour",
        maxSize: 100,
        error: 0.01,
        quantiles: [0.9, 0.5],
        description: "Sizes."
      })
      for (let i = 1; i <= 10; i++) yield* Metric.update(sizes, i)
      const empty = Metric.summary({ name: "ptest_summary_empty", maxAge: "1 hour", maxSize: 10, error: 0.01, quantiles: [0.5] })
      yield* Metric.value(empty)
      const text = yield* PrometheusText.snapshot
      checkGrammar(text)
      expect(linesOf(text, "ptest_summary_")).toEqual([
        "# TYPE ptest_summary_empty summary",
        "ptest_summary_empty{quantile=\"0.5\"} NaN",
        "ptest_summary_empty_sum 0",
        "ptest_summary_empty_count 0",
        "# HELP ptest_summary_sizes Sizes.",
        "# TYPE ptest_summary_sizes summary",
        "ptest_summary_sizes{quantile=\"0.5\"} 5",
        "ptest_summary_sizes{quantile=\"0.9\"} 9",
        "ptest_summary_sizes_sum 55",
        "ptest_summary_sizes_count 10"
      ])
    }))

  it.effect("odd names get `_` for each forbidden character; label values are escaped, emoji kept", () =>
    Effect.gen(function*() {
      const odd = Metric.tagged(
        Metric.counter("ptest_odd.name-with/\u{1F680}:colon"),
        "label-with.dots:and\u00e9",
        "say \"hi\"\nnext \\ \u{1F389}"
      )
      yield* Metric.incrementBy(odd, 3)
      yield* Metric.set(Metric.gauge("9ptest_odd_leading_digit"), 1)
      const text = yield* PrometheusText.snapshot
      checkGrammar(text)
      expect(linesOf(text, "ptest_odd")).toEqual([
        "# TYPE ptest_odd_name_with__:colon counter",
        "ptest_odd_name_with__:colon{label_with_dots_and_=\"say \\\"hi\\\"\\nnext \\\\ \u{1F389}\"} 3"
      ])
      expect(linesOf(text, "_ptest_odd_leading_digit")).toEqual([
        "# TYPE _ptest_odd_leading_digit gauge",
        "_ptest_odd_leading_digit 1"
      ])
    }))

  it.effect("names that meet after replacement share a group; the first kind wins a disagreement", () =>
    Effect.gen(function*() {
      yield* Metric.set(Metric.gauge("ptest_clash-a"), 7)
      yield* Metric.incrementBy(Metric.tagged(Metric.counter("ptest_clash.a", { description: "Clash." }), "via", "dot"), 1)
      yield* Metric.incrementBy(Metric.tagged(Metric.counter("ptest_clash/a"), "via", "slash"), 2)
      const text = yield* PrometheusText.snapshot
      checkGrammar(text)
      expect(linesOf(text, "ptest_clash")).toEqual([
        "# HELP ptest_clash_a Clash.",
        "# TYPE ptest_clash_a counter",
        "ptest_clash_a{via=\"dot\"} 1",
        "ptest_clash_a{via=\"slash\"} 2"
      ])
    }))

  it.effect("the whole snapshot of the process fits the grammar and renders the same twice", () =>
    Effect.gen(function*() {
      yield* Metric.increment(Metric.counter("ptest_whole_counter"))
      const a = yield* PrometheusText.snapshot
      const b = PrometheusText.render((yield* Metric.snapshot).reverse())
      checkGrammar(a)
      expect(b).toBe(a)
      expect(linesOf(a, "ptest_whole_")).toEqual(["# TYPE ptest_whole_counter counter", "ptest_whole_counter 1"])
    }))
})

describe("the line grammar check", () => {
  it("refuses what the format refuses", () => {
    for (
      const bad of [
        "a 1",
        "a{b=\"c} 1\n",
        "a{b=\"c\nd\"} 1\n",
        "a-b 1\n",
        "a Infinity\n",
        "# TYPE a counter\n# TYPE a counter\n",
        "# TYPE a counter\na 1\n# TYPE b gauge\nb 1\n# HELP a late\n",
        "# TYPE a histogram\na 1\n"
      ]
    ) expect(() => checkGrammar(bad), JSON.stringify(bad)).toThrow()
    checkGrammar("# HELP a x \\\\ y\n# TYPE a histogram\na_bucket{le=\"+Inf\"} 1\na_sum 2.5e+21\na_count 1\n")
  })
})

describe("PrometheusText.render on hand-made pairs", () => {
  const pair = <A>(key: MetricKey.MetricKey<any>, state: MetricState.MetricState<A>) => MetricPair.unsafeMake(key, state)

  it("no pairs give the empty text", () => {
    expect(PrometheusText.render([])).toBe("")
  })

  it("a repeated tag keeps its last value; tags are sorted by name; a tag named `le` gives way", () => {
    const key = MetricKey.histogram("ptest_hand_h", MetricBoundaries.fromIterable([1]))
    const text = PrometheusText.render([
      pair(
        MetricKey.tagged(MetricKey.tagged(MetricKey.tagged(MetricKey.gauge("ptest_hand_g"), "z", "1"), "a", "old"), "a", "new"),
        MetricState.gauge(2)
      ),
      pair(
        MetricKey.tagged(key, "le", "tag"),
        MetricState.histogram({ buckets: [[1, 1], [Number.POSITIVE_INFINITY, 2]], count: 2, min: 1, max: 3, sum: 4 })
      )
    ])
    checkGrammar(text)
    expect(text).toBe(
      [
        "# TYPE ptest_hand_g gauge",
        "ptest_hand_g{a=\"new\",z=\"1\"} 2",
        "# TYPE ptest_hand_h histogram",
        "ptest_hand_h_bucket{le=\"1\"} 1",
        "ptest_hand_h_bucket{le=\"+Inf\"} 2",
        "ptest_hand_h_sum 4",
        "ptest_hand_h_count 2",
        ""
      ].join("\n")
    )
  })

  it("summary quantiles Effect could not resolve are NaN; a None description gives no HELP", () => {
    const text = PrometheusText.render([
      pair(
        MetricKey.summary({ name: "ptest_hand_s", maxAge: "1 second", maxSize: 1, error: 0, quantiles: [0.99, 0.5] }),
        MetricState.summary({
          error: 0,
          quantiles: [[0.99, Option.none()], [0.5, Option.some(1.5)]],
          count: 3,
          min: 1,
          max: 2,
          sum: 4.5
        })
      )
    ])
    checkGrammar(text)
    expect(text.split("\n")).toEqual([
      "# TYPE ptest_hand_s summary",
      "ptest_hand_s{quantile=\"0.5\"} 1.5",
      "ptest_hand_s{quantile=\"0.99\"} NaN",
      "ptest_hand_s_sum 4.5",
      "ptest_hand_s_count 3",
      ""
    ])
  })
})
