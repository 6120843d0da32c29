/**
 * The Vue page: the basic flow with `forgestream/vue` — create a `storyteller` session, send a
 * message, watch it stream, show the connection status. Render functions only (no runtime
 * template compiler, so it runs under the CSP without 'unsafe-eval').
 */
import { computed, createApp, defineComponent, h, markRaw, onBeforeUpdate, onUpdated, ref, shallowRef, type PropType } from "vue";
import { AgentClient, ForgestreamError, init, version, type ContentView } from "forgestream";
import { useAgentSession } from "forgestream/vue";
import "./styles.css";

function text(content: ContentView | null | undefined): string {
  if (content === undefined || content === null) return "";
  return typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

const Chat = defineComponent({
  props: { client: { type: Object as PropType<AgentClient>, required: true } },
  setup(props) {
    const { session, snapshot, status, error, send, cancel, reopen } = useAgentSession(props.client, { create: { agent: { name: "storyteller" } } });
    // Opening failed: the badge says so beside the banner (a re-check saw "idle" there).
    const badge = () => (status.value === "error" && !session.value ? "failed" : snapshot.value.connection.status);
    const draft = ref("");
    const sendError = ref<string | null>(null);
    const running = computed(() => snapshot.value.turns.at(-1)?.status === "running");
    // Follows a growing reply as a chat does: a page scrolled to its end before an update stays
    // at its end, so the reply and Cancel stay in view; one the user scrolled up keeps its place.
    // (A trial at 375 px: the page stayed at the top while the reply grew past the screen.)
    let atEnd = true;
    onBeforeUpdate(() => {
      const page = document.documentElement;
      atEnd = page.scrollHeight - (window.scrollY + window.innerHeight) < 80;
    });
    onUpdated(() => {
      if (atEnd) window.scrollTo(0, document.documentElement.scrollHeight);
    });
    const submit = async () => {
      sendError.value = null;
      try {
        await send(draft.value.trim());
        draft.value = "";
      } catch (e) {
        const err = ForgestreamError.from(e);
        sendError.value = `${err.code}: ${err.message}`;
      }
    };
    return () =>
      h("main", { class: "vue-main" }, [
        h("div", { class: "session-head" }, [
          h("div", [h("h1", "storyteller"), h("code", { class: "muted small", "data-testid": "session-id" }, session.value?.id ?? "creating…")]),
          h("div", { class: `badge badge-${badge()}` }, [h("span", { class: "dot" }), h("span", { class: "badge-status", "data-testid": "connection" }, badge())]),
        ]),
        error.value
          ? h("div", { class: "banner banner-error", "data-testid": "error" }, [
              `${error.value.code}: ${error.value.message} `,
              // Opening failed: opened again by itself when it can be (the adapter's reopen
              // after a retryable failure), or now.
              session.value ? null : h("button", { type: "button", class: "link", "data-testid": "reopen", onClick: reopen }, "Try again"),
            ])
          : null,
        sendError.value ? h("div", { class: "banner banner-error", "data-testid": "action-error" }, sendError.value) : null,
        h(
          "ol",
          { class: "turns vue-turns" },
          snapshot.value.turns.map((turn) =>
            h("li", { class: "turn", key: turn.turnId, "data-testid": "turn", "data-turn-id": turn.turnId, "data-status": turn.status }, [
              ...(turn.input ?? []).flatMap((input, i) => {
                const item = input as { type?: string; content?: unknown };
                return item.type === "user.message" && typeof item.content === "string" ? [h("div", { class: "user-input", key: `in${i}` }, [h("p", { class: "user-text" }, item.content)])] : [];
              }),
              ...turn.items.flatMap((item) =>
                item.body.kind === "message" && text(item.body.content)
                  ? [h("div", { class: "message", key: item.key, "data-testid": "message", "data-message-id": item.body.id }, [h("p", { class: "message-text", "data-testid": "message-text" }, text(item.body.content))])]
                  : [],
              ),
              h("div", { class: `turn-footer turn-${turn.status}` }, [h("span", { class: "turn-status", "data-testid": "turn-status" }, turn.status)]),
            ]),
          ),
        ),
        h(
          "form",
          {
            class: "composer",
            onSubmit: (e: Event) => {
              e.preventDefault();
              void submit();
            },
          },
          [
            h("label", { for: "composer-input", class: "sr-only" }, "Message to storyteller"),
            h("textarea", {
              id: "composer-input",
              "data-testid": "composer",
              rows: 2,
              // A hint, not text to delete first (a trial typed after "Tell a story, 120 words").
              placeholder: "Message storyteller — e.g. Tell a story, 120 words",
              value: draft.value,
              onInput: (e: Event) => (draft.value = (e.target as HTMLTextAreaElement).value),
              // Enter sends, Shift+Enter breaks the line (as on the React page).
              onKeydown: (e: KeyboardEvent) => {
                if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
                  e.preventDefault();
                  if (!running.value && session.value && draft.value.trim()) void submit();
                }
              },
            }),
            running.value
              ? h("button", { type: "button", class: "danger", "data-testid": "cancel", onClick: () => void cancel() }, "Cancel")
              : h("button", { type: "submit", class: "primary", "data-testid": "send", disabled: !session.value || !draft.value.trim() }, "Send"),
          ],
        ),
      ]);
  },
});

const App = defineComponent({
  setup() {
    const client = shallowRef<AgentClient | null>(null);
    const coreVersion = ref<string>();
    const failure = ref<string | null>(null);
    init().then(
      () => {
        coreVersion.value = version();
        // markRaw: the client has private fields, which a reactive proxy would break. Its own
        // storage namespace: a reload reopens this page's session, never the React page's.
        client.value = markRaw(new AgentClient({ baseUrl: "", flavor: "trueforge", storage: "session", storageNamespace: "vue" }));
      },
      (e: unknown) => (failure.value = String(e)),
    );
    return () =>
      h("div", { class: "vue-app" }, [
        h("header", { class: "topbar" }, [
          h("div", { class: "brand" }, ["◆ forgestream — Vue ", h("span", { class: "muted small" }, ["core ", h("span", { "data-testid": "core-version" }, coreVersion.value ?? "loading…")])]),
          h("a", { class: "muted small", href: "./" }, "React demo"),
        ]),
        failure.value ? h("div", { class: "banner banner-error" }, failure.value) : null,
        client.value ? h(Chat, { client: client.value }) : null,
      ]);
  },
});

createApp(App).mount("#app");
