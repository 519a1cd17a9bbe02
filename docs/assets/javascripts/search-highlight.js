/* Material (9.8) links a search result's page with ?h= and the query terms found in that page's
   own entry; where they are found only in its sections, the page's link ends in an empty ?h=,
   which highlights nothing. Such a link gets the terms of its group's other links (its
   sections), else the query as typed, else no ?h= at all (mkdocs.yml: extra_javascript). */
"use strict";
(() => {
  const list = document.querySelector(".md-search-result__list");
  const input = document.querySelector("input.md-search__input");
  if (!list) return;
  const fill = () => {
    for (const item of list.querySelectorAll(".md-search-result__item")) {
      const links = [...item.querySelectorAll("a[href]")].map((a) => [a, new URL(a.href)]);
      if (!links.some(([, url]) => url.searchParams.get("h") === "")) continue;
      const terms = new Set(
        links.flatMap(([, url]) => (url.searchParams.get("h") || "").split(" ").filter(Boolean)),
      );
      const h = [...terms].join(" ") || (input ? input.value.trim() : "");
      for (const [a, url] of links) {
        if (url.searchParams.get("h") !== "") continue;
        if (h) url.searchParams.set("h", h);
        else url.searchParams.delete("h");
        a.href = url.href;
      }
    }
  };
  // results are drawn (and drawn again, page by page, as one scrolls) into the list
  new MutationObserver(fill).observe(list, { childList: true, subtree: true });
})();
