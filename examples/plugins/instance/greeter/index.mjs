// A register(ctx) plugin: no import at all. It registers into the loader's staging area; its
// contributions reach the City only once register has completed.
export async function register(ctx) {
  let greeted = 0
  ctx.registerAction("greet", {
    // `call` is fresh for every call; `call.invoke` reaches a sibling through the current view.
    handler: async (name, call) => {
      greeted++
      const time = await call.invoke("clock", "now")
      // ctx.config: this plugin's settings in plugins.json, with the manifest's defaults applied.
      return `${ctx.config.salutation} ${name}, from ${call.agent.id} (${time})`
    }
  })
  ctx.registerAction("learn", {
    // Skills are data: a reload replaces the set live; the next Turn sees it.
    handler: async (skill) => {
      await ctx.requestReload({ mode: "reload", skills: [{ name: "greeting" }, { name: skill }] })
      return `learned ${skill}`
    }
  })
  ctx.registerSystem(() => `Greet people by name (${greeted} greeted so far).`)
  ctx.onDispose(() => ctx.log.info(`greeter: ${greeted} greeting(s) in this generation`))
}
