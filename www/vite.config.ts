import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import vue from "@vitejs/plugin-vue";

// Built into www/dist and served by forgestream-server (scripts/demo). Three pages: the React demo
// (index.html), the Vue page (vue.html) and a bare page exposing the SDK to the e2e tests (sdk.html).
export default defineConfig({
  plugins: [react(), vue()],
  build: {
    target: "es2022",
    rollupOptions: {
      input: {
        main: new URL("index.html", import.meta.url).pathname,
        vue: new URL("vue.html", import.meta.url).pathname,
        sdk: new URL("sdk.html", import.meta.url).pathname,
        quickstart: new URL("quickstart.html", import.meta.url).pathname,
      },
    },
  },
  server: { fs: { allow: [".."] } },
});
