import { App } from './app/App';
import { mount } from './app/mount';

mount(<App />);
