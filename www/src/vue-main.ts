import { createApp, defineComponent, h, ref, onMounted } from "vue";
import { init, version } from "forgestream";

const App = defineComponent(() => {
  const coreVersion = ref<string>();
  onMounted(async () => {
    await init();
    coreVersion.value = version();
  });
  return () => h("main", [h("h1", "forgestream — Vue"), h("p", ["core: ", h("span", { "data-testid": "core-version" }, coreVersion.value ?? "loading…")])]);
});

createApp(App).mount("#app");
