/**
 * A child's output as ChildRunner.ts reads it: the stderr tail and, when collected, stdout, under
 * a cap on both together.
 * @since 0.1.0
 */
import type { ChildProcess } from "node:child_process"

/** Keeps only the last `max` bytes of what is pushed (whole chunks, cut when read). */
const makeTail = (max: number) => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  return {
    push: (chunk: Uint8Array) => {
      chunks.push(chunk)
      size += chunk.length
      while (chunks.length > 1 && size - chunks[0]!.length >= max) size -= chunks.shift()!.length
    },
    text: () => {
      const all = Buffer.concat(chunks)
      return new TextDecoder("utf-8", { fatal: false }).decode(all.subarray(Math.max(0, all.length - max))).trim()
    }
  }
}

/**
 * A child's output: the stderr tail and, when collected, stdout; `onOverflow` once past `outputBytes`.
 * @since 0.1.0
 * @category constructors
 */
export const makeOutput = (
  child: ChildProcess,
  tailBytes: number,
  limit: number | undefined,
  onOverflow: (limit: number) => void
) => {
  const tail = makeTail(tailBytes)
  const stdout: Array<Buffer> = []
  let size = 0
  let over = false
  const counted = (chunk: Uint8Array) => {
    if (limit === undefined || over) return !over
    size += chunk.length
    if (size <= limit) return true
    over = true
    onOverflow(limit)
    return false
  }
  child.stderr?.on("data", (chunk: Buffer) => {
    if (counted(chunk)) tail.push(chunk)
  })
  child.stdout?.on("data", (chunk: Buffer) => {
    if (counted(chunk)) stdout.push(chunk)
  })
  return { stderr: tail.text, stdout: () => Buffer.concat(stdout).toString("utf8") }
}
