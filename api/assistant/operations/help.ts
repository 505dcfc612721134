/** help: what the assistant understands, in the language of the question. */
import { helpText } from '../../../lib/assistant/texts.ts';
import { anyone, defineOperation } from './types.ts';

export const help = defineOperation('help.capabilities', {
  access: anyone,
  plan: async ({ app }, { language }) => ({ kind: 'answered', text: helpText(language, app.config.ASSISTANT_CONFIRMATION_TTL_SECONDS) }),
});
