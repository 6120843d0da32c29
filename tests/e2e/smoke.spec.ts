import { test, expect } from "@playwright/test";

test("the demo page loads the wasm core", async ({ page }) => {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto("/");
  await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
  expect(errors).toEqual([]);
});

test("the Vue page loads the wasm core", async ({ page }) => {
  await page.goto("/vue.html");
  await expect(page.getByTestId("core-version")).toHaveText(/^\d+\.\d+\.\d+$/);
});
