import '@mantine/core/styles.css';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { ApiError } from './api.ts';
import { App } from './App.tsx';
import { I18nProvider } from './i18n.tsx';

const queryClient = new QueryClient({
  defaultOptions: {
    // A refusal (4xx) will not change by asking again; only faults and network errors are retried.
    queries: { retry: (n, e) => n < 2 && !(e instanceof ApiError && e.problem.status < 500), refetchOnWindowFocus: false },
  },
});

createRoot(document.getElementById('root')!).render(
  <MantineProvider>
    <QueryClientProvider client={queryClient}>
      <I18nProvider>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </I18nProvider>
    </QueryClientProvider>
  </MantineProvider>,
);
