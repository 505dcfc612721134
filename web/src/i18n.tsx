/**
 * A small dictionary: English and Russian, chosen by the user and remembered in this browser.
 * Every text the console shows comes from texts-en.ts and texts-ru.ts; a text with a number or a name in it is a
 * function, so each language can put them where its grammar wants them (and Russian can pick
 * the right plural form). Technical identifiers (task types, states and actions from the API,
 * field names, permission names) are shown as the API names them, in both languages.
 */
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { en, type Dict } from './texts-en.ts';
import { ru } from './texts-ru.ts';

export type Lang = 'en' | 'ru';
const dicts: Record<Lang, Dict> = { en, ru };

const Ctx = createContext<{ t: Dict; lang: Lang; setLang(l: Lang): void }>({ t: en, lang: 'en', setLang: () => {} });

export function I18nProvider({ children }: { children: ReactNode }) {
  const initial = (localStorage.getItem('switchyard.lang') as Lang | null) ?? (navigator.language.startsWith('ru') ? 'ru' : 'en');
  const [lang, setLangState] = useState<Lang>(initial);
  // The page says which language it is in (screen readers, hyphenation), from the first render on.
  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);
  const setLang = (l: Lang) => {
    localStorage.setItem('switchyard.lang', l);
    setLangState(l);
  };
  return <Ctx.Provider value={{ t: dicts[lang], lang, setLang }}>{children}</Ctx.Provider>;
}

export const useI18n = () => useContext(Ctx);
