// Deliberately broken: register records an action, then throws. The loader skips the plugin
// with the reason, and the action never reaches the City (staging).
export function register(ctx) {
  ctx.registerAction("half", { handler: () => "never reachable" })
  throw new Error("the weather service is unreachable")
}
