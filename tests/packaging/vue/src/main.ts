// A minimal consumer of the published package: the Vue adapter, a storyteller session, one
// message, the streamed text and the connection status (data-testid hooks for check.mjs).
// Render functions, no runtime template compiler (the emulator's CSP has no 'unsafe-eval').
import { createApp, defineComponent, h, markRaw, ref, shallowRef, type PropType } from "vue";
import { AgentClient, init, version, type ContentView, type SessionSnapshot } from "forgestream";
import { useAgentSession } from "forgestream/vue";

function plain(content: ContentView | null | undefined): string {
  if (content === undefined || content === null) return "";
  return typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/** The message text of the newest turn. */
function lastText(snapshot: SessionSnapshot): string {
  const turn = snapshot.turns.at(-1);
  return turn ? turn.items.map((item) => (item.body.kind === "message" ? plain(item.body.content) : "")).join("") : "";
}

const Chat = defineComponent({
  props: { client: { type: Object as PropType<AgentClient>, required: true } },
  setup(props) {
    const { session, snapshot, error, send } = useAgentSession(props.client, { restore: false, create: { agent: { name: "storyteller" } } });
    const sendError = ref<string | null>(null);
    return () => {
      const turn = snapshot.value.turns.at(-1);
      return h("main", [
        h("p", [
          "session ",
          h("code", { "data-testid": "session-id" }, session.value?.id ?? ""),
          " — connection ",
          h("strong", { "data-testid": "connection" }, snapshot.value.connection.status),
          " — turn ",
          h("strong", { "data-testid": "turn-status" }, turn?.status ?? "none"),
        ]),
        error.value ? h("p", { "data-testid": "error" }, `${error.value.code}: ${error.value.message}`) : null,
        sendError.value ? h("p", { "data-testid": "error" }, sendError.value) : null,
        h(
          "button",
          {
            type: "button",
            "data-testid": "send",
            disabled: !session.value || turn?.status === "running",
            onClick: () => send("Tell a story, 120 words, 8 ms").catch((e: unknown) => (sendError.value = String(e))),
          },
          "Send",
        ),
        h("p", { "data-testid": "text" }, lastText(snapshot.value)),
      ]);
    };
  },
});

const App = defineComponent({
  setup() {
    // shallowRef + markRaw: AgentClient has private (#) fields, which a deep reactive proxy breaks.
    const client = shallowRef<AgentClient | null>(null);
    const failure = ref<string | null>(null);
    init().then(
      () => (client.value = markRaw(new AgentClient({ baseUrl: "", flavor: "trueforge", storage: "memory" }))),
      (e: unknown) => (failure.value = String(e)),
    );
    return () =>
      failure.value
        ? h("p", { "data-testid": "error" }, failure.value)
        : client.value
          ? h("div", [h("h1", ["forgestream ", h("span", { "data-testid": "core-version" }, version()), " (Vue)"]), h(Chat, { client: client.value })])
          : h("p", "loading…");
  },
});

createApp(App).mount("#app");
