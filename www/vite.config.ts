import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import vue from "@vitejs/plugin-vue";

// Built into www/dist and served by forgestream-server (scripts/demo). Two pages: the React demo
// (index.html) and the Vue page (vue.html).
export default defineConfig({
  plugins: [react(), vue()],
  build: {
    target: "es2022",
    rollupOptions: {
      input: {
        main: new URL("index.html", import.meta.url).pathname,
        vue: new URL("vue.html", import.meta.url).pathname,
      },
    },
  },
  server: { fs: { allow: [".."] } },
});
