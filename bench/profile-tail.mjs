// Summarizes a window of a V8 `.cpuprofile` (bench/scale.bench.ts, CITY_BENCH_CPU_PROF): self time
// and inclusive time per function, the top entries; `(idle)` is left out. The window is the
// `seconds` before the last `skip` seconds of the profile (the stop of a daemon with thousands of
// watches takes a while: `skip` leaves it out; the per-second busy time printed first shows where).
//
//   node bench/profile-tail.mjs <file.cpuprofile> [seconds=60] [skip=0] [top=25]
import { readFileSync } from "node:fs"

const [file, secondsArg = "60", skipArg = "0", topArg = "25"] = process.argv.slice(2)
const profile = JSON.parse(readFileSync(file, "utf8"))
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const times = []
let t = profile.startTime
for (const d of profile.timeDeltas) times.push((t += d))
const to = profile.endTime - Number(skipArg) * 1e6
const from = to - Number(secondsArg) * 1e6
const busy = new Map()
const self = new Map()
const total = new Map()
let all = 0
const label = (n) => {
  const f = n.callFrame
  const where = f.url === "" ? "" : ` ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}`
  return `${f.functionName || "(anonymous)"}${where}`
}
for (let i = 0; i < profile.samples.length; i++) {
  const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000
  let id = profile.samples[i]
  const n = byId.get(id)
  if (n.callFrame.functionName === "(idle)") continue
  const second = Math.floor((profile.endTime - times[i]) / 1e6)
  busy.set(second, (busy.get(second) ?? 0) + dt)
  if (times[i] < from || times[i] >= to) continue
  all += dt
  self.set(label(n), (self.get(label(n)) ?? 0) + dt)
  const seen = new Set()
  while (id !== undefined) {
    const l = label(byId.get(id))
    if (!seen.has(l)) {
      seen.add(l)
      total.set(l, (total.get(l) ?? 0) + dt)
    }
    id = parent.get(id)
  }
}
console.log(`busy ms per second, counted back from the end: ${[...busy].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}:${v.toFixed(0)}`).join(" ")}`)
const top = Number(topArg)
const show = (title, m) => {
  console.log(`${title} (busy ms: ${all.toFixed(0)} in ${secondsArg} s, ending ${skipArg} s before the end)`)
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${v.toFixed(0).padStart(7)}  ${k}`)
}
show("self", self)
show("inclusive", total)
