// Render the timeline of entries in the browser.

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export function formatRelativeTime(published, now = Date.now()) {
  const elapsed = now - new Date(published).getTime();
  if (elapsed < HOUR) {
    return `${Math.max(1, Math.round(elapsed / MINUTE))} min ago`;
  }
  if (elapsed < DAY) {
    return `${Math.round(elapsed / HOUR)} h ago`;
  }
  return `${Math.round(elapsed / DAY)} d ago`;
}

function renderEntry(entry) {
  const item = document.createElement("li");
  const link = document.createElement("a");
  link.href = entry.link;
  link.textContent = entry.title;
  const when = document.createElement("time");
  when.textContent = formatRelativeTime(entry.published);
  item.append(link, " ", when);
  return item;
}

export async function loadTimeline(container, endpoint = "/api/unread") {
  const response = await fetch(endpoint);
  if (!response.ok) {
    throw new Error(`timeline request failed: ${response.status}`);
  }
  const entries = await response.json();
  const list = document.createElement("ul");
  for (const entry of entries) {
    list.append(renderEntry(entry));
  }
  container.replaceChildren(list);
  return entries.length;
}
