// The search bar (use-search.ts holds what it searches and shows): the
// text (Enter: the next match, Shift+Enter the previous one, Esc: clear),
// the kind filter, stepping buttons, and how many matches there are (their
// names in its tooltip).
import { fullName } from '../../../profiler/contract/names.ts';
import { KIND_FILTERS } from '../base/colors.ts';
import type { Search } from './use-search.ts';

export function SearchBox({ search }: { search: Search }) {
  return (
    <span className="search">
      <input
        data-testid="search"
        type="search"
        placeholder="Search kernels, calls, ranges…  (Enter: next)"
        value={search.text}
        onChange={(e) => search.type(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            search.step(e.shiftKey ? -1 : 1);
          } else if (e.key === 'Escape') {
            search.clear();
            (e.target as HTMLInputElement).blur();
          }
        }}
      />
      <select data-testid="search-kind" value={search.kind} onChange={(e) => search.setKind(e.target.value)} title="Only operations of this kind">
        {KIND_FILTERS.map((f) => (
          <option key={f.id} value={f.id}>
            {f.label}
          </option>
        ))}
      </select>
      <button data-testid="search-prev" title="Previous match (Shift+Enter)" disabled={!search.res?.items.length} onClick={() => search.step(-1)}>
        ‹
      </button>
      <button data-testid="search-next" title="Next match (Enter)" disabled={!search.res?.items.length} onClick={() => search.step(1)}>
        ›
      </button>
      <span
        className="match-count"
        data-testid="search-count"
        title={search.res?.names
          .slice(0, 20)
          .map((n) => `${fullName(n)} × ${n.count}`)
          .join('\n')}
      >
        {search.matchText}
      </span>
    </span>
  );
}
