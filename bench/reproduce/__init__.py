"""Paper reproductions: the papers' tables (docs/bibliography.md) at reduced scale."""
